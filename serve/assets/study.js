// The study page of tesbo's web view: loads the study from the JSON API,
// keeps it current from the event stream (/api/events) and draws it with
// uPlot and charts.js. Trials are merged by ID, so an event that repeats
// what a load already holds is harmless, and a trial never moves back to
// an earlier state. With ?static=1 the page loads once and opens no
// stream (for screenshots: a headless browser's virtual-time budget
// never expires while a stream is open).
(function () {
  'use strict';
  const root = document.getElementById('study');
  const NAME = root.dataset.name;
  const Q = 'name=' + encodeURIComponent(NAME);
  const PAGE = 100;        // table rows per page
  const MAX_COLS = 20;     // parameters shown as table columns
  const MAX_SCATTER = 24;  // parameters drawn in the scatter
  const MAX_CURVES = 60;   // learning curves drawn (the latest trials')
  const COLORS = ['#440154', '#3b528b', '#21918c', '#5ec962', '#fde725']; // viridis fifths
  const INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000];
  const RANK = { pending: 0, running: 1, complete: 2, failed: 2, pruned: 2 };
  const C = window.tesboCharts;
  const STATIC = ['1', 'true', 'yes'].includes(new URLSearchParams(location.search).get('static'));

  const S = {
    params: [], trials: new Map(), iters: new Map(), summary: null,
    loaded: false, buffered: [], modelIter: -1, model: null,
    sortKey: 'id', sortDir: 1, filter: '', page: 0, charts: {},
    logY: false, grid: null, pair: null, static: STATIC,
  };
  window.tesbo = S; // for the browser test and the curious

  const $ = (id) => document.getElementById(id);
  const fmt = (v) => (v === null || v === undefined || Number.isNaN(v)) ? '–' : (+v).toPrecision(6).replace(/\.?0+(e|$)/, '$1');
  const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; };

  function banner(msg) {
    const b = $('banner');
    b.textContent = msg || '';
    b.hidden = !msg;
  }

  async function getJSON(url) {
    const r = await fetch(url, { credentials: 'same-origin', cache: 'no-store' });
    const body = await r.json().catch(() => ({ error: r.status + ' ' + r.statusText }));
    if (!r.ok) throw new Error(body.error || r.statusText);
    return body;
  }

  function upsertTrial(t) {
    const old = S.trials.get(t.id);
    if (old && RANK[old.status] * 1e6 + old.attempts > RANK[t.status] * 1e6 + t.attempts) return;
    S.trials.set(t.id, t);
  }

  function setIteration(it) {
    S.iters.set(it.iter, it);
    if (it.has_model && it.iter > S.modelIter) loadModel();
  }

  async function loadAll() {
    S.loaded = false;
    const [st, tr] = await Promise.all([getJSON('/api/study?' + Q), getJSON('/api/trials?' + Q)]);
    S.params = st.params;
    S.summary = st.summary;
    S.steps = st.steps;
    S.iters = new Map();
    st.iterations.forEach(setIteration);
    S.trials = new Map();
    tr.trials.forEach(upsertTrial);
    S.loaded = true;
    const queued = S.buffered;
    S.buffered = [];
    queued.forEach(apply);
    if (!S.charts.progress) makeCharts();
    schedule();
    loadModel();
  }

  function apply(e) {
    if (e.name === 'trials') e.data.forEach(upsertTrial);
    if (e.name === 'iterations') e.data.forEach(setIteration);
    if (e.name === 'summary') S.summary = e.data;
    schedule();
  }

  // Live updates. The stream starts before the load, so that nothing
  // committed in between is missed; events wait until the load is done.
  function connect() {
    if (STATIC) {
      loadAll().catch((e) => banner(e.message));
      return;
    }
    const es = new EventSource('/api/events?' + Q);
    es.addEventListener('hello', () => { banner(''); loadAll().catch((e) => banner(e.message)); });
    for (const name of ['trials', 'iterations', 'summary']) {
      es.addEventListener(name, (ev) => {
        const e = { name, data: JSON.parse(ev.data) };
        if (S.loaded) apply(e); else S.buffered.push(e);
      });
    }
    es.addEventListener('dberror', (ev) => banner('The database cannot be read: ' + JSON.parse(ev.data).error));
    es.addEventListener('dbok', () => banner(''));
    es.onerror = () => {
      if (es.readyState === EventSource.CLOSED) {
        banner('Live updates stopped (the server refused the stream); reload the page to retry.');
      } else {
        banner('Live updates lost: reconnecting…');
      }
    };
  }

  let modelBusy = false, modelAgain = false;
  async function loadModel() {
    if (modelBusy) { modelAgain = true; return; }
    const latest = Math.max(-1, ...[...S.iters.values()].filter((i) => i.has_model).map((i) => i.iter));
    if (S.model && latest <= S.modelIter) return;
    modelBusy = true;
    try {
      S.model = await getJSON('/api/model?' + Q);
      S.modelIter = S.model.iteration > 0 ? S.model.iteration : latest;
      drawModel();
    } catch (e) {
      $('model-note').textContent = 'The model view failed: ' + e.message;
    } finally {
      modelBusy = false;
      if (modelAgain) { modelAgain = false; loadModel(); }
    }
  }

  let timer = null;
  function schedule() {
    if (timer === null) timer = setTimeout(() => { timer = null; render(); }, 100);
  }

  const pts = (color, size) => ({ show: true, size, fill: color, stroke: color });
  const noLine = () => null;

  // plot makes a uPlot chart that keeps the width of its container.
  function plot(target, opts, data) {
    const base = { height: 260, scales: { x: { time: false } }, legend: { live: true } };
    return C.fitted(target, Object.assign(base, opts), data);
  }

  // The progress chart: values, best so far, recommendation, and failed
  // trials as hollow red circles along the bottom (they have no value).
  // Its y axis is linear or, with the log toggle, logarithmic (symmetric
  // log when some value is not positive).
  function makeProgress() {
    const box = $('progress');
    if (S.charts.progress) S.charts.progress.destroy();
    box.textContent = '';
    const vals = [...S.trials.values()].filter((t) => t.status === 'complete').map((t) => t.value);
    const positive = vals.length > 0 && vals.every((v) => v > 0);
    const tiny = vals.filter((v) => v !== 0).reduce((m, v) => Math.min(m, Math.abs(v)), Infinity);
    const y = !S.logY ? {} : positive ? { distr: 3 } : { distr: 4, asinh: Number.isFinite(tiny) ? tiny : 1 };
    S.charts.progress = plot(box, {
      scales: { x: { time: false }, y, fail: { range: [0, 1] } },
      series: [{ label: 'trial' },
        { label: 'value', stroke: '#607d8b', paths: noLine, points: pts('#607d8b', 5) },
        { label: 'best observed', stroke: '#1565c0', width: 2, paths: uPlot.paths.stepped({ align: 1 }), spanGaps: true, points: { show: false } },
        { label: 'recommendation f(x̄)', stroke: '#e65100', paths: noLine, points: pts('#e65100', 7) },
        { label: 'failed', scale: 'fail', stroke: '#c62828', width: 2, paths: noLine, value: (u, v) => (v === null ? '--' : 'yes'),
          points: { show: true, size: 8, width: 2, fill: '#fff', stroke: '#c62828' } }],
      axes: [{ label: 'trial', incrs: INCRS }, { label: S.logY ? (positive ? 'value (log)' : 'value (symmetric log)') : 'value', values: S.logY ? C.logValues : C.numValues, size: 70 }],
    }, [[], [], [], [], []]);
    box.dataset.log = y.distr ? String(y.distr) : '';
  }

  function makeCharts() {
    makeProgress();
    if (S.summary && S.summary.optimum !== null) {
      S.charts.regret = plot($('regret'), {
        height: 260,
        scales: { x: { time: false }, y: { distr: 3 } },
        series: [{ label: 'iteration' }, { label: 'regret of x̄ (log)', stroke: '#6a1b9a', width: 2, points: pts('#6a1b9a', 4) }],
        axes: [{ label: 'iteration', incrs: INCRS }, { label: 'regret', values: C.logValues, size: 70 }],
      }, [[], []]);
    }
    const bars = uPlot.paths.bars({ size: [0.7, 40] });
    S.charts.times = plot($('times'), {
      height: 240,
      scales: { x: { time: false, range: (u, lo, hi) => [lo - 0.5, hi + 0.5] } },
      series: [{ label: 'iteration' },
        { label: 'fit + propose + evaluate', fill: '#a5d6a7', stroke: '#66bb6a', paths: bars },
        { label: 'fit + propose', fill: '#ffcc80', stroke: '#ffa726', paths: bars },
        { label: 'fit', fill: '#90caf9', stroke: '#42a5f5', paths: bars }],
      axes: [{ label: 'iteration', incrs: INCRS }, { label: 'seconds', values: C.numValues }],
    }, [[], [], [], []]);
    S.charts.scatter = S.params.slice(0, MAX_SCATTER).map((p) => {
      const div = el('div', undefined, 'chart');
      $('scatter').appendChild(div);
      const series = [{ label: p.name }];
      COLORS.forEach((c, k) => series.push({ label: ['worst', '2nd', '3rd', '4th', 'best'][k] + ' fifth', stroke: c, paths: noLine, points: pts(c, 5) }));
      const ax = C.axisFor(p);
      return plot(div, {
        height: 220, legend: { show: false },
        scales: { x: ax.scale },
        series, axes: [ax.axis, { label: 'value', values: C.numValues, size: 60 }],
      }, [[], [], [], [], [], []]);
    });
    if (S.params.length > MAX_SCATTER) {
      $('scatter').appendChild(el('p', 'The first ' + MAX_SCATTER + ' of ' + S.params.length + ' parameters are drawn.', 'hint'));
    }
    $('logy').addEventListener('change', (e) => { S.logY = e.target.checked; makeProgress(); render(); });
    new ResizeObserver(() => { drawParallel(); drawContour(); drawPareto(); }).observe($('parallel-box'));
  }

  function sortedTrials() {
    return [...S.trials.values()].sort((a, b) => a.id - b.id);
  }

  function render() {
    if (!S.loaded) return;
    const ts = sortedTrials();
    renderFacts();
    renderProgress(ts);
    renderCurves(ts);
    renderTimes();
    renderScatter(ts);
    renderTable(ts);
    drawParallel();
    drawPareto();
  }

  function renderFacts() {
    const s = S.summary;
    if (!s) return;
    const st = $('f-state');
    st.textContent = s.state + (s.holder ? ' (' + s.holder + ')' : '');
    st.className = 'state ' + s.state;
    $('f-evals').textContent = (s.complete + s.pruned + s.failed - s.outside) + ' / ' + s.budget +
      (s.outside ? ' (+' + s.outside + ' imported or attached)' : '') + (s.running ? ' (' + s.running + ' running)' : '');
    $('f-failed').textContent = s.failed;
    $('f-pruned').textContent = s.pruned;
    $('f-best').textContent = fmt(s.best_observed);
    $('f-rec').textContent = fmt(s.recommendation);
    $('f-regret').textContent = fmt(s.regret);
  }

  function renderProgress(ts) {
    const min = S.summary && S.summary.minimize;
    const last = new Map(); // iteration → position of its last trial
    ts.forEach((t, i) => last.set(t.iteration, i));
    const xs = [], vals = [], best = [], rec = [], failed = [];
    let b = null;
    ts.forEach((t, i) => {
      xs.push(i + 1);
      const v = t.status === 'complete' ? t.value : null;
      vals.push(v);
      if (v !== null && (b === null || (min ? v < b : v > b))) b = v;
      best.push(b);
      rec.push(null);
      failed.push(t.status === 'failed' ? 0.03 : null);
    });
    const reg = [[], []];
    for (const it of [...S.iters.values()].sort((a, c) => a.iter - c.iter)) {
      if (!it.done) continue;
      const i = last.get(it.iter);
      if (i !== undefined && it.best_value !== null) rec[i] = it.best_value;
      if (it.regret !== null) { reg[0].push(it.iter); reg[1].push(Math.max(it.regret, 1e-12)); }
    }
    S.charts.progress.setData([xs, vals, best, rec, failed]);
    $('progress').dataset.points = String(xs.length);
    if (S.charts.regret) {
      $('regret').hidden = !reg[0].length;
      S.charts.regret.setData(reg);
    }
  }

  // Learning curves: the reported values of the latest MAX_CURVES trials
  // that reported any; the chart is rebuilt when they change (its number
  // of series does).
  function renderCurves(ts) {
    const shown = ts.filter((t) => t.intermediates && t.intermediates.length).slice(-MAX_CURVES);
    $('curves-box').hidden = !shown.length;
    const key = shown.map((t) => t.id + ':' + t.intermediates.length + ':' + t.status).join(',');
    if (!shown.length || key === S.curvesKey) return;
    S.curvesKey = key;
    const steps = [...new Set(shown.flatMap((t) => t.intermediates.map((p) => p[0])))].sort((a, b) => a - b);
    const at = new Map(steps.map((s, i) => [s, i]));
    const data = [steps], series = [{ label: 'step' }];
    for (const t of shown) {
      const y = new Array(steps.length).fill(null);
      t.intermediates.forEach(([s, v]) => { y[at.get(s)] = v; });
      data.push(y);
      const c = t.status === 'pruned' ? '#c62828' : t.status === 'complete' ? '#1565c0' : '#9e9e9e';
      series.push({ label: 'trial ' + t.id, stroke: c, width: 1, spanGaps: true, points: { show: false } });
    }
    if (S.charts.curves) S.charts.curves.destroy();
    S.charts.curves = plot($('curves'), {
      height: 260, legend: { show: false }, scales: { x: { time: false } }, series,
      axes: [{ label: 'step', incrs: INCRS }, { label: 'value', values: C.numValues, size: 70 }],
    }, data);
    $('curves').dataset.curves = String(shown.length);
  }

  function renderTimes() {
    const its = [...S.iters.values()].filter((i) => i.iter > 0).sort((a, c) => a.iter - c.iter);
    const x = [], a = [], b = [], c = [];
    for (const it of its) {
      x.push(it.iter);
      c.push(it.fit_s);
      b.push(it.fit_s + it.propose_s);
      a.push(it.fit_s + it.propose_s + (it.done ? it.eval_s : 0));
    }
    S.charts.times.setData([x, a, b, c]);
  }

  function renderScatter(ts) {
    const done = ts.filter((t) => t.status === 'complete');
    const sorted = done.map((t) => t.value).sort((a, c) => a - c);
    const min = S.summary && S.summary.minimize;
    const fifth = (v) => { // 0 = worst fifth … 4 = best
      let lo = 0, hi = sorted.length;
      while (lo < hi) { const m = (lo + hi) >> 1; if (sorted[m] < v) lo = m + 1; else hi = m; }
      const k = Math.min(4, Math.floor(5 * lo / Math.max(1, sorted.length)));
      return min ? 4 - k : k;
    };
    const cls = done.map((t) => fifth(t.value));
    S.charts.scatter.forEach((u, j) => {
      // A categorical's points spread a little around their choice (by
      // trial ID, so they stay put), else they would hide each other.
      const cat = S.params[j].kind === 'categorical';
      const at = (t) => cat ? t.x[j] + 0.3 * (((t.id * 0.6180339887) % 1) - 0.5) : t.x[j];
      const order = done.map((_, i) => i).sort((a, c) => at(done[a]) - at(done[c]));
      const data = [order.map((i) => at(done[i]))];
      for (let k = 0; k < 5; k++) data.push(order.map((i) => (cls[i] === k ? done[i].value : null)));
      u.setData(data);
    });
  }

  // The model view: the posterior mean ± 2σ along each parameter through
  // x̄ (the other parameters at x̄), x̄ itself and the trusted maximizers
  // projected on the parameter; a categorical's at each choice, as points
  // (no line between choices). Then the importance bars and the 2-D slice.
  function drawModel() {
    const m = S.model;
    const box = $('model');
    (S.charts.model || []).forEach((u) => u.destroy());
    S.charts.model = [];
    box.textContent = '';
    const note = $('model-note');
    if (!m.slices.length) {
      note.textContent = m.note || 'No model yet.';
      $('importance').textContent = '';
      $('contour-box').hidden = true;
      return;
    }
    note.textContent = 'Iteration ' + m.iteration + ': the GP conditioned on ' + m.n + ' evaluations, through x̄ = trial ' +
      m.xbar.trial + ' (posterior mean ' + fmt(m.xbar.mean) + ' ± ' + fmt(2 * m.xbar.sd) + ').' +
      (m.trusted.length ? ' Dots: the ' + m.trusted.length + ' trusted maximizers X*, H(x*) = ' + fmt(m.entropy) + ' nats.' : '') +
      (m.note ? ' ' + m.note : '');
    m.slices.forEach((sl, j) => {
      const p = S.params[j] || { name: sl.param, kind: 'float' };
      const cat = p.kind === 'categorical';
      // A parameter inactive at x̄ (or at a trusted maximizer) is null there: no dot.
      const extra = [[m.xbar.x[j], m.xbar.mean, 'xbar']].concat(m.trusted.map((t) => [t.x[j], t.mean, 'xs']))
        .filter(([x]) => x !== null);
      const rows = sl.x.map((x, i) => [x, sl.mean[i], sl.mean[i] + 2 * sl.sd[i], sl.mean[i] - 2 * sl.sd[i], null, null])
        .concat(extra.map(([x, v, kind]) => [x, null, null, null, kind === 'xbar' ? v : null, kind === 'xs' ? v : null]))
        .sort((a, b) => a[0] - b[0]);
      const data = [0, 1, 2, 3, 4, 5].map((c) => rows.map((r) => r[c]));
      const div = el('div', undefined, 'chart');
      div.dataset.param = p.name;
      box.appendChild(div);
      const ax = C.axisFor(p);
      const line = (color, width) => cat
        ? { stroke: color, paths: noLine, points: pts(color, width > 1 ? 9 : 6) }
        : { stroke: color, width, spanGaps: true };
      S.charts.model.push(plot(div, {
        height: 220, legend: { show: j === 0 },
        scales: { x: ax.scale },
        series: [{ label: sl.param },
          Object.assign({ label: 'mean' }, line('#1565c0', 2)),
          Object.assign({ label: '+2σ' }, line('#90caf9', 1)),
          Object.assign({ label: '−2σ' }, line('#90caf9', 1)),
          { label: 'x̄', stroke: '#e65100', paths: noLine, points: { show: true, size: 9, fill: '#e65100' } },
          { label: 'X*', stroke: '#2e7d32', paths: noLine, points: { show: true, size: 6, fill: '#2e7d32' } }],
        bands: cat ? [] : [{ series: [2, 3], fill: 'rgba(21,101,192,0.12)' }],
        axes: [ax.axis, { label: 'f', values: C.numValues, size: 60 }],
      }, data));
    });
    drawTrusted(m);
    C.importanceBars($('importance'), S.params, m.importance || []);
    setupContour(m);
  }

  // The 2-D slice: the posterior mean over a chosen pair of parameters (by
  // default the two most important), the others at x̄.
  function setupContour(m) {
    const box = $('contour-box');
    box.hidden = S.params.length < 2;
    if (box.hidden) return;
    const sx = $('c-x'), sy = $('c-y');
    if (!sx.options.length) {
      S.params.forEach((p, j) => { sx.appendChild(el('option', p.name)).value = j; sy.appendChild(el('option', p.name)).value = j; });
      const order = S.params.map((_, j) => j).sort((a, b) => (m.importance[b] || 0) - (m.importance[a] || 0));
      sx.value = order[0]; sy.value = order[1];
      const change = () => { if (sx.value === sy.value) sy.value = String((+sx.value + 1) % S.params.length); loadContour(); };
      sx.addEventListener('change', change);
      sy.addEventListener('change', change);
    }
    loadContour();
  }

  let contourSeq = 0;
  async function loadContour() {
    const seq = ++contourSeq;
    const x = $('c-x').value, y = $('c-y').value;
    try {
      const g = await getJSON('/api/model2d?' + Q + '&x=' + x + '&y=' + y + '&res=31');
      if (seq !== contourSeq) return;
      S.grid = g;
      drawContour();
    } catch (e) {
      $('contour-note').textContent = 'The 2-D slice failed: ' + e.message;
    }
  }

  function drawContour() {
    const g = S.grid;
    if (!g || !g.mean.length || $('contour-box').hidden) return;
    const min = S.summary && S.summary.minimize;
    const r = C.contour($('contour'), g, S.params[g.x.param], S.params[g.y.param], sortedTrials(), min);
    $('contour').dataset.cells = String(r.cells);
    $('contour-note').textContent = 'Posterior mean of iteration ' + g.iteration + ' over ' + g.x.name + ' × ' + g.y.name +
      ', the other parameters at x̄ (orange cross); dots: completed trials (all, projected). Colour from ' +
      fmt(min ? r.hi : r.lo) + ' (dark) to ' + fmt(min ? r.lo : r.hi) + ' (yellow, best).';
  }

  // drawPareto draws the Pareto front of an objective with two or more
  // objective outputs (the first two).
  function drawPareto() {
    const outs = (S.summary && S.summary.outputs) || [];
    const box = $('pareto-box');
    box.hidden = !S.loaded || outs.filter((o) => o.goal !== 'constraint').length < 2;
    if (box.hidden) return;
    const n = C.pareto($('pareto'), outs, sortedTrials(), S.summary.pareto);
    $('pareto').dataset.points = String(n);
    const s = S.summary;
    $('pareto-note').textContent = 'Orange: the evaluated Pareto set (' + (s.pareto || []).length + ' trials)' +
      (s.hypervolume != null ? ', hypervolume ' + fmt(s.hypervolume) : '') +
      (s.feasible_fraction != null ? '; feasible: ' + fmt(s.feasible_fraction) + ' of the complete trials' : '') + '.';
  }

  function drawParallel() {
    if (!S.loaded) return;
    const n = C.parallel($('parallel'), S.params, sortedTrials(), S.summary && S.summary.minimize);
    $('parallel').dataset.lines = String(n);
  }

  function drawTrusted(m) {
    const tbl = $('trusted');
    tbl.hidden = !m.trusted.length;
    if (!m.trusted.length) return;
    const head = tbl.tHead;
    head.textContent = '';
    const hr = head.insertRow();
    ['x*', 'p(x*)', 'mean', '2σ'].concat(S.params.slice(0, MAX_COLS).map((p) => p.name)).forEach((h) => hr.appendChild(el('th', h)));
    const body = tbl.tBodies[0];
    body.textContent = '';
    m.trusted.forEach((t, i) => {
      const r = body.insertRow();
      [i + 1, fmt(t.p), fmt(t.mean), fmt(2 * t.sd)].concat(t.x.slice(0, MAX_COLS).map((v, j) => C.paramText(S.params[j], v, fmt)))
        .forEach((v) => r.appendChild(el('td', String(v), 'num')));
    });
  }

  // The trial table: sortable by any column, filtered by state, paged.
  function columns() {
    const cols = [
      ['id', (t) => t.id], ['iter', (t) => t.iteration], ['status', (t) => t.status],
      ['value', (t) => t.value], ['attempts', (t) => t.attempts], ['eval s', (t) => t.eval_s],
    ];
    if (S.steps) cols.splice(4, 0, ['step', (t) => t.step]); // the last reported step (stopped trials: where)
    S.params.slice(0, MAX_COLS).forEach((p, j) => cols.push([p.name, (t) => t.x[j], (v) => C.paramText(p, v, fmt)]));
    cols.push(['error', (t) => t.error || '']);
    return cols;
  }

  function renderTable(ts) {
    const cols = columns();
    const tbl = $('trials');
    if (!tbl.tHead.rows.length) {
      const hr = tbl.tHead.insertRow();
      cols.forEach(([name]) => {
        const th = el('th', name);
        th.dataset.key = name;
        th.addEventListener('click', () => {
          S.sortDir = S.sortKey === name ? -S.sortDir : 1;
          S.sortKey = name;
          renderTable(sortedTrials());
        });
        hr.appendChild(th);
      });
    }
    for (const th of tbl.tHead.rows[0].cells) {
      th.className = th.dataset.key === S.sortKey ? (S.sortDir > 0 ? 'asc' : 'desc') : '';
    }
    const key = cols.find((c) => c[0] === S.sortKey)[1];
    let rows = S.filter ? ts.filter((t) => t.status === S.filter) : ts;
    rows = rows.slice().sort((a, b) => {
      const x = key(a), y = key(b);
      if (x === y) return a.id - b.id;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (x < y ? -1 : 1) * S.sortDir;
    });
    const pages = Math.max(1, Math.ceil(rows.length / PAGE));
    S.page = Math.min(S.page, pages - 1);
    $('count').textContent = rows.length + ' trials' + (S.params.length > MAX_COLS ? ' (first ' + MAX_COLS + ' parameters shown; the downloads have all)' : '');
    $('page').textContent = 'page ' + (S.page + 1) + ' / ' + pages;
    const body = tbl.tBodies[0];
    body.textContent = '';
    for (const t of rows.slice(S.page * PAGE, (S.page + 1) * PAGE)) {
      const r = body.insertRow();
      r.className = t.status;
      cols.forEach(([name, f, show]) => {
        const v = f(t);
        if (name === 'error') {
          // The whole error: on hover (title) and, clicked, in the cell.
          const td = el('td', v, v ? 'err' : '');
          if (v) { td.title = v; td.addEventListener('click', () => td.classList.toggle('open')); }
          r.appendChild(td);
        } else if (show) {
          r.appendChild(el('td', show(v), 'num'));
        } else if (typeof v === 'number' || v === null) {
          r.appendChild(el('td', name === 'id' || name === 'iter' || name === 'attempts' || (name === 'step' && v != null) ? String(v) : fmt(v), 'num'));
        } else {
          r.appendChild(el('td', String(v)));
        }
      });
    }
  }

  $('filter').addEventListener('change', (e) => { S.filter = e.target.value; S.page = 0; renderTable(sortedTrials()); });
  $('prev').addEventListener('click', () => { S.page = Math.max(0, S.page - 1); renderTable(sortedTrials()); });
  $('next').addEventListener('click', () => { S.page += 1; renderTable(sortedTrials()); });
  connect();
})();
