// The study page of tesbo's web view: loads the study from the JSON API,
// keeps it current from the event stream (/api/events) and draws it with
// uPlot. Trials are merged by ID, so an event that repeats what a load
// already holds is harmless, and a trial never moves back to an earlier
// state.
(function () {
  'use strict';
  const root = document.getElementById('study');
  const NAME = root.dataset.name;
  const Q = 'name=' + encodeURIComponent(NAME);
  const PAGE = 100;        // table rows per page
  const MAX_COLS = 20;     // parameters shown as table columns
  const MAX_SCATTER = 24;  // parameters drawn in the scatter
  const COLORS = ['#440154', '#3b528b', '#21918c', '#5ec962', '#fde725']; // viridis fifths
  const INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000];
  const RANK = { pending: 0, running: 1, complete: 2, failed: 2 };

  const S = {
    params: [], trials: new Map(), iters: new Map(), summary: null,
    loaded: false, buffered: [], modelIter: -1, model: null,
    sortKey: 'id', sortDir: 1, filter: '', page: 0, charts: {},
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

  function width(frac) {
    return Math.max(260, Math.floor((root.clientWidth - 16) * frac));
  }

  function plot(target, opts, data) {
    const base = { width: width(1), height: 260, scales: { x: { time: false } }, legend: { live: true } };
    return new uPlot(Object.assign(base, opts), data, target);
  }

  function makeCharts() {
    const pts = (color, size) => ({ show: true, size, fill: color, stroke: color });
    const noLine = () => null;
    S.charts.progress = plot($('progress'), {
      series: [{ label: 'trial' },
        { label: 'value', stroke: '#607d8b', paths: noLine, points: pts('#607d8b', 5) },
        { label: 'best observed', stroke: '#1565c0', width: 2, paths: uPlot.paths.stepped({ align: 1 }), spanGaps: true, points: { show: false } },
        { label: 'recommendation f(x̄)', stroke: '#e65100', paths: noLine, points: pts('#e65100', 7) }],
      axes: [{ label: 'trial', incrs: INCRS }, { label: 'value' }],
    }, [[], [], [], []]);
    if (S.summary && S.summary.optimum !== null) {
      S.charts.regret = plot($('regret'), {
        height: 200,
        scales: { x: { time: false }, y: { distr: 3 } },
        series: [{ label: 'iteration' }, { label: 'regret of x̄ (log)', stroke: '#6a1b9a', width: 2, points: pts('#6a1b9a', 4) }],
        axes: [{ label: 'iteration', incrs: INCRS }, { label: 'regret' }],
      }, [[], []]);
    }
    const bars = uPlot.paths.bars({ size: [0.7, 40] });
    S.charts.times = plot($('times'), {
      height: 220,
      scales: { x: { time: false, range: (u, lo, hi) => [lo - 0.5, hi + 0.5] } },
      series: [{ label: 'iteration' },
        { label: 'fit + propose + evaluate', fill: '#a5d6a7', stroke: '#66bb6a', paths: bars },
        { label: 'fit + propose', fill: '#ffcc80', stroke: '#ffa726', paths: bars },
        { label: 'fit', fill: '#90caf9', stroke: '#42a5f5', paths: bars }],
      axes: [{ label: 'iteration', incrs: INCRS }, { label: 'seconds' }],
    }, [[], [], [], []]);
    S.charts.scatter = S.params.slice(0, MAX_SCATTER).map((p, j) => {
      const div = el('div', undefined, 'chart');
      $('scatter').appendChild(div);
      const series = [{ label: p.name }];
      COLORS.forEach((c, k) => series.push({ label: ['worst', '2nd', '3rd', '4th', 'best'][k] + ' fifth', stroke: c, paths: noLine, points: pts(c, 5) }));
      return plot(div, {
        width: width(S.params.length > 1 ? 0.32 : 1), height: 200, legend: { show: false },
        scales: { x: { time: false, distr: p.kind === 'logfloat' ? 3 : 1 } },
        series, axes: [{ label: p.name }, { label: 'value' }],
      }, [[], [], [], [], [], []]);
    });
    if (S.params.length > MAX_SCATTER) {
      $('scatter').appendChild(el('p', 'The first ' + MAX_SCATTER + ' of ' + S.params.length + ' parameters are drawn.', 'hint'));
    }
    window.addEventListener('resize', () => {
      S.charts.progress.setSize({ width: width(1), height: 260 });
      if (S.charts.regret) S.charts.regret.setSize({ width: width(1), height: 200 });
      S.charts.times.setSize({ width: width(1), height: 220 });
    });
  }

  function sortedTrials() {
    return [...S.trials.values()].sort((a, b) => a.id - b.id);
  }

  function render() {
    if (!S.loaded) return;
    const ts = sortedTrials();
    renderFacts();
    renderProgress(ts);
    renderTimes();
    renderScatter(ts);
    renderTable(ts);
  }

  function renderFacts() {
    const s = S.summary;
    if (!s) return;
    const st = $('f-state');
    st.textContent = s.state + (s.holder ? ' (' + s.holder + ')' : '');
    st.className = 'state ' + s.state;
    $('f-evals').textContent = s.complete + ' / ' + s.budget + (s.running ? ' (' + s.running + ' running)' : '');
    $('f-failed').textContent = s.failed;
    $('f-best').textContent = fmt(s.best_observed);
    $('f-rec').textContent = fmt(s.recommendation);
    $('f-regret').textContent = fmt(s.regret);
  }

  function renderProgress(ts) {
    const min = S.summary && S.summary.minimize;
    const last = new Map(); // iteration → position of its last trial
    ts.forEach((t, i) => last.set(t.iteration, i));
    const xs = [], vals = [], best = [], rec = [];
    let b = null;
    ts.forEach((t, i) => {
      xs.push(i + 1);
      const v = t.status === 'complete' ? t.value : null;
      vals.push(v);
      if (v !== null && (b === null || (min ? v < b : v > b))) b = v;
      best.push(b);
      rec.push(null);
    });
    const reg = [[], []];
    for (const it of [...S.iters.values()].sort((a, c) => a.iter - c.iter)) {
      if (!it.done) continue;
      const i = last.get(it.iter);
      if (i !== undefined && it.best_value !== null) rec[i] = it.best_value;
      if (it.regret !== null) { reg[0].push(it.iter); reg[1].push(Math.max(it.regret, 1e-12)); }
    }
    S.charts.progress.setData([xs, vals, best, rec]);
    $('progress').dataset.points = String(xs.length);
    if (S.charts.regret) {
      $('regret').hidden = !reg[0].length;
      S.charts.regret.setData(reg);
    }
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
      const order = done.map((_, i) => i).sort((a, c) => done[a].x[j] - done[c].x[j]);
      const data = [order.map((i) => done[i].x[j])];
      for (let k = 0; k < 5; k++) data.push(order.map((i) => (cls[i] === k ? done[i].value : null)));
      u.setData(data);
    });
  }

  // The model view: the posterior mean ± 2σ along each parameter through
  // x̄ (the other parameters at x̄), x̄ itself and the trusted maximizers
  // projected on the parameter.
  function drawModel() {
    const m = S.model;
    const box = $('model');
    box.textContent = '';
    const note = $('model-note');
    if (!m.slices.length) {
      note.textContent = m.note || 'No model yet.';
      return;
    }
    note.textContent = 'Iteration ' + m.iteration + ': the GP conditioned on ' + m.n + ' evaluations, through x̄ = trial ' +
      m.xbar.trial + ' (posterior mean ' + fmt(m.xbar.mean) + ' ± ' + fmt(2 * m.xbar.sd) + ').' +
      (m.trusted.length ? ' Dots: the ' + m.trusted.length + ' trusted maximizers X*, H(x*) = ' + fmt(m.entropy) + ' nats.' : '') +
      (m.note ? ' ' + m.note : '');
    m.slices.forEach((sl, j) => {
      const extra = [[m.xbar.x[j], m.xbar.mean, 'xbar']].concat(m.trusted.map((t) => [t.x[j], t.mean, 'xs']));
      const rows = sl.x.map((x, i) => [x, sl.mean[i], sl.mean[i] + 2 * sl.sd[i], sl.mean[i] - 2 * sl.sd[i], null, null])
        .concat(extra.map(([x, v, kind]) => [x, null, null, null, kind === 'xbar' ? v : null, kind === 'xs' ? v : null]))
        .sort((a, b) => a[0] - b[0]);
      const data = [0, 1, 2, 3, 4, 5].map((c) => rows.map((r) => r[c]));
      const div = el('div', undefined, 'chart');
      box.appendChild(div);
      const kind = (S.params[j] || {}).kind;
      plot(div, {
        width: width(m.slices.length > 1 ? 0.32 : 1), height: 220, legend: { show: j === 0 },
        scales: { x: { time: false, distr: kind === 'logfloat' ? 3 : 1 } },
        series: [{ label: sl.param },
          { label: 'mean', stroke: '#1565c0', width: 2, spanGaps: true },
          { label: '+2σ', stroke: '#90caf9', spanGaps: true },
          { label: '−2σ', stroke: '#90caf9', spanGaps: true },
          { label: 'x̄', stroke: '#e65100', paths: () => null, points: { show: true, size: 9, fill: '#e65100' } },
          { label: 'X*', stroke: '#2e7d32', paths: () => null, points: { show: true, size: 6, fill: '#2e7d32' } }],
        bands: [{ series: [2, 3], fill: 'rgba(21,101,192,0.12)' }],
        axes: [{ label: sl.param }, { label: 'f' }],
      }, data);
    });
    drawTrusted(m);
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
      [i + 1, fmt(t.p), fmt(t.mean), fmt(2 * t.sd)].concat(t.x.slice(0, MAX_COLS).map(fmt)).forEach((v) => r.appendChild(el('td', String(v), 'num')));
    });
  }

  // The trial table: sortable by any column, filtered by state, paged.
  function columns() {
    const cols = [
      ['id', (t) => t.id], ['iter', (t) => t.iteration], ['status', (t) => t.status],
      ['value', (t) => t.value], ['attempts', (t) => t.attempts], ['eval s', (t) => t.eval_s],
    ];
    S.params.slice(0, MAX_COLS).forEach((p, j) => cols.push([p.name, (t) => t.x[j]]));
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
      cols.forEach(([name, f]) => {
        const v = f(t);
        if (name === 'error') {
          const td = el('td', v, v ? 'err' : '');
          if (v) { td.title = 'click to expand'; td.addEventListener('click', () => td.classList.toggle('open')); }
          r.appendChild(td);
        } else if (typeof v === 'number' || v === null) {
          r.appendChild(el('td', name === 'id' || name === 'iter' || name === 'attempts' ? String(v) : fmt(v), 'num'));
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
