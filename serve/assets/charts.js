// Drawing helpers of tesbo's web view, shared by the study page: tick
// labels for log and categorical axes, charts that follow their
// container's width, and the canvas plots uPlot has no kind for (parallel
// coordinates, the 2-D slice of the model, the importance bars). Every
// text drawn comes from textContent or the canvas, never from markup.
(function () {
  'use strict';
  const VIRIDIS = ['#440154', '#3b528b', '#21918c', '#5ec962', '#fde725'];

  // fmtTick labels an axis value compactly: 1e-5, 2.5e-4, 0.01, 120, 3e+6
  // (never "0" for a small positive value, as uPlot's default does).
  function fmtTick(v) {
    if (v === null || v === undefined || Number.isNaN(v)) return '';
    if (v === 0) return '0';
    const a = Math.abs(v);
    if (a < 1e-3 || a >= 1e5) return v.toExponential(2).replace(/\.?0+e/, 'e').replace('e+', 'e');
    return String(+v.toPrecision(4));
  }

  const isPow10 = (v) => v !== 0 && Math.abs(Math.log10(Math.abs(v)) - Math.round(Math.log10(Math.abs(v)))) < 1e-9;

  // logValues is the uPlot axis `values` of a log scale: every split
  // labelled when there are few, else the powers of ten only.
  function logValues(u, splits) {
    const few = splits.filter((v) => v !== null).length <= 6;
    return splits.map((v) => (v !== null && (few || isPow10(v)) ? fmtTick(v) : ''));
  }

  // numValues is the uPlot axis `values` of a linear scale.
  function numValues(u, splits) { return splits.map(fmtTick); }

  // axisFor returns the uPlot axis options and scale of a parameter: log
  // for a LogFloat, one tick per choice labelled with its name for a
  // categorical (the scale spans the choices' indices ± ½).
  function axisFor(p) {
    if (p.kind === 'categorical') {
      const n = p.choices.length;
      return {
        axis: { label: p.name, splits: () => p.choices.map((_, i) => i), values: (u, s) => s.map((i) => p.choices[Math.round(i)] ?? '') },
        scale: { time: false, range: () => [-0.5, n - 0.5] },
      };
    }
    if (p.kind === 'logfloat') return { axis: { label: p.name, values: logValues }, scale: { time: false, distr: 3 } };
    return { axis: { label: p.name, values: numValues }, scale: { time: false } };
  }

  // paramText formats a parameter's value: its name for a categorical,
  // else fmt(v).
  function paramText(p, v, fmt) {
    if (v === null || v === undefined) return fmt(v); // an inactive conditional parameter
    if (p && p.kind === 'categorical') return p.choices[Math.round(v)] ?? String(v);
    return fmt(v);
  }

  // unit maps a parameter's native value to [0, 1] as the model's cube
  // does (log for LogFloat, bin centres for Int and categorical).
  function unit(p, v) {
    if (v === null || v === undefined) return NaN; // an inactive parameter (conditional space)
    if (p.kind === 'categorical') { const n = p.choices.length; return (Math.round(v) + 0.5) / n; }
    if (p.kind === 'int') { const n = Math.floor(p.high) - Math.ceil(p.low) + 1; return (v - Math.ceil(p.low) + 0.5) / n; }
    if (p.kind === 'logfloat') return (Math.log(v) - Math.log(p.low)) / (Math.log(p.high) - Math.log(p.low));
    return p.high > p.low ? (v - p.low) / (p.high - p.low) : 0.5;
  }

  // ticks returns [unit position, label] pairs along a parameter's axis.
  function ticks(p) {
    if (p.kind === 'categorical') return p.choices.map((c, i) => [unit(p, i), c]);
    if (p.kind === 'logfloat') {
      const out = [];
      for (let e = Math.ceil(Math.log10(p.low)); e <= Math.floor(Math.log10(p.high)); e++) out.push([unit(p, 10 ** e), fmtTick(10 ** e)]);
      if (out.length > 8) return out.filter((_, i) => i % Math.ceil(out.length / 8) === 0);
      if (out.length < 2) return [[0, fmtTick(p.low)], [1, fmtTick(p.high)]];
      return out;
    }
    return [0, 0.25, 0.5, 0.75, 1].map((f) => [f, fmtTick(p.low + f * (p.high - p.low))]);
  }

  // fitted keeps a uPlot chart as wide as its container.
  function fitted(div, opts, data) {
    const h = opts.height;
    const u = new uPlot(Object.assign({}, opts, { width: Math.max(200, div.clientWidth) }), data, div);
    let pending = false, gone = false;
    const ro = new ResizeObserver(() => {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => { // outside the observer's callback: no resize loop
        pending = false;
        const w = Math.max(200, div.clientWidth);
        if (!gone && div.isConnected && Math.abs(w - u.width) > 1) u.setSize({ width: w, height: h });
      });
    });
    ro.observe(div);
    const destroy = u.destroy.bind(u);
    u.destroy = () => { gone = true; ro.disconnect(); destroy(); };
    return u;
  }

  // canvasIn sizes a canvas to its container (CSS pixels × devicePixelRatio)
  // and returns its 2-D context scaled to CSS pixels.
  function canvasIn(canvas, height) {
    const w = Math.max(200, canvas.parentElement.clientWidth);
    const r = window.devicePixelRatio || 1;
    canvas.style.width = w + 'px';
    canvas.style.height = height + 'px';
    canvas.width = Math.round(w * r);
    canvas.height = Math.round(height * r);
    const g = canvas.getContext('2d');
    g.setTransform(r, 0, 0, r, 0, 0);
    g.clearRect(0, 0, w, height);
    g.font = '12px system-ui, sans-serif';
    return { g, w, h: height };
  }

  // viridis maps t in [0, 1] to a colour (5 stops, linear between).
  function viridis(t) {
    t = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (VIRIDIS.length - 1);
    const i = Math.min(VIRIDIS.length - 2, Math.floor(t)), f = t - i;
    const a = VIRIDIS[i], b = VIRIDIS[i + 1];
    const c = (k) => Math.round(parseInt(a.substr(k, 2), 16) * (1 - f) + parseInt(b.substr(k, 2), 16) * f);
    return 'rgb(' + c(1) + ',' + c(3) + ',' + c(5) + ')';
  }

  // parallel draws one polyline per completed trial across the parameters'
  // axes and the value's, coloured by value (yellow: best), the best on
  // top. It returns the number of lines drawn.
  function parallel(canvas, params, trials, minimize) {
    const { g, w, h } = canvasIn(canvas, 320);
    const done = trials.filter((t) => t.status === 'complete');
    const top = 28, bottom = h - 24, left = 40, right = w - 12;
    if (!done.length || !params.length) { g.fillText('No completed trial yet.', left, top + 20); return 0; }
    let lo = Infinity, hi = -Infinity;
    done.forEach((t) => { lo = Math.min(lo, t.value); hi = Math.max(hi, t.value); });
    const vAxis = { name: 'value', kind: 'float', low: lo, high: hi > lo ? hi : lo + 1 };
    const axes = params.concat([vAxis]);
    const xAt = (k) => left + (axes.length > 1 ? k * (right - left) / (axes.length - 1) : 0);
    const yAt = (f) => bottom - f * (bottom - top);
    const good = (t) => { const f = (t.value - lo) / (hi - lo || 1); return minimize ? 1 - f : f; };
    done.slice().sort((a, b) => good(a) - good(b)).forEach((t) => {
      g.strokeStyle = viridis(good(t));
      g.globalAlpha = 0.55;
      g.beginPath();
      let pen = false; // the line breaks at an inactive parameter
      axes.forEach((p, k) => {
        const f = k < params.length ? unit(p, t.x[k]) : unit(vAxis, t.value);
        if (Number.isNaN(f)) { pen = false; return; }
        if (pen) g.lineTo(xAt(k), yAt(f)); else g.moveTo(xAt(k), yAt(f));
        pen = true;
      });
      g.stroke();
    });
    g.globalAlpha = 1;
    axes.forEach((p, k) => {
      const x = xAt(k);
      g.strokeStyle = '#555';
      g.beginPath(); g.moveTo(x, top); g.lineTo(x, bottom); g.stroke();
      g.fillStyle = '#222';
      g.textAlign = k === 0 ? 'left' : k === axes.length - 1 ? 'right' : 'center';
      g.fillText(p.name.length > 18 ? p.name.slice(0, 17) + '…' : p.name, x, top - 10);
      const last = k === axes.length - 1; // its labels go left of the axis, inside the canvas
      g.textAlign = last ? 'right' : 'left';
      g.fillStyle = '#555';
      for (const [f, label] of ticks(p)) g.fillText(label, last ? x - 3 : x + 3, yAt(f) + 4);
      g.textAlign = 'left';
    });
    return done.length;
  }

  // contour draws a 2-D slice of the model (gridJSON) as a heat map of the
  // posterior mean (yellow: best) with 8 contour lines (not across a
  // categorical, whose choices have no order), the completed trials as white dots and
  // x̄ as an orange cross. It returns the number of cells drawn.
  function contour(canvas, grid, px, py, trials, minimize) {
    const { g, w, h } = canvasIn(canvas, 360);
    const left = 70, right = w - 10, top = 10, bottom = h - 40;
    const nx = grid.x.x.length, ny = grid.y.x.length;
    let lo = Infinity, hi = -Infinity;
    grid.mean.forEach((row) => row.forEach((v) => { lo = Math.min(lo, v); hi = Math.max(hi, v); }));
    const X = (f) => left + f * (right - left), Y = (f) => bottom - f * (bottom - top);
    // A continuous axis's grid points span [0, 1] (cells centred on them);
    // a binned one's are bin centres (cells are the bins).
    const binned = (p, n) => p.kind === 'categorical' || (p.kind === 'int' && n === Math.floor(p.high) - Math.ceil(p.low) + 1);
    const edges = (p, n) => binned(p, n)
      ? (k) => [k / n, (k + 1) / n]
      : (k) => [Math.max(0, (k - 0.5) / (n - 1)), Math.min(1, (k + 0.5) / (n - 1))];
    const at = (p, n) => binned(p, n) ? (k) => (k + 0.5) / n : (k) => k / Math.max(1, n - 1);
    const ex = edges(px, nx), ey = edges(py, ny);
    let cells = 0;
    for (let i = 0; i < ny; i++) {
      for (let k = 0; k < nx; k++) {
        const f = (grid.mean[i][k] - lo) / (hi - lo || 1);
        g.fillStyle = viridis(minimize ? 1 - f : f);
        const [x0, x1] = ex(k), [y0, y1] = ey(i);
        g.fillRect(X(x0), Y(y1), X(x1) - X(x0) + 0.5, Y(y0) - Y(y1) + 0.5);
        cells++;
      }
    }
    if (px.kind !== 'categorical' && py.kind !== 'categorical') {
      isolines(g, grid.mean, lo, hi, at(px, nx), at(py, ny), X, Y);
    }
    g.strokeStyle = '#fff';
    g.fillStyle = 'rgba(0,0,0,0.6)';
    // A trial (or x̄) where either parameter is inactive has no place here.
    trials.filter((t) => t.status === 'complete').forEach((t) => {
      const tx = unit(px, t.x[grid.x.param]), ty = unit(py, t.x[grid.y.param]);
      if (Number.isNaN(tx) || Number.isNaN(ty)) return;
      g.beginPath();
      g.arc(X(tx), Y(ty), 3, 0, 2 * Math.PI);
      g.fill(); g.stroke();
    });
    const ux = unit(px, grid.xbar[grid.x.param]), uy = unit(py, grid.xbar[grid.y.param]);
    if (!Number.isNaN(ux) && !Number.isNaN(uy)) {
      const bx = X(ux), by = Y(uy);
      g.strokeStyle = '#e65100'; g.lineWidth = 3;
      g.beginPath(); g.moveTo(bx - 7, by - 7); g.lineTo(bx + 7, by + 7); g.moveTo(bx + 7, by - 7); g.lineTo(bx - 7, by + 7); g.stroke();
      g.lineWidth = 1;
    }
    g.fillStyle = '#222'; g.textAlign = 'center';
    for (const [f, label] of ticks(px)) g.fillText(label, X(f), bottom + 14);
    g.fillText(px.name, (left + right) / 2, bottom + 32);
    g.textAlign = 'right';
    for (const [f, label] of ticks(py)) g.fillText(label, left - 4, Y(f) + 4);
    g.save(); g.translate(12, (top + bottom) / 2); g.rotate(-Math.PI / 2); g.textAlign = 'center'; g.fillText(py.name, 0, 0); g.restore();
    g.textAlign = 'left';
    return { cells, lo, hi };
  }

  // isolines draws 8 contour lines of z (rows: y) between lo and hi by
  // marching squares, linear along each cell's edges.
  function isolines(g, z, lo, hi, ux, uy, X, Y) {
    const ny = z.length, nx = z[0].length;
    g.strokeStyle = 'rgba(255,255,255,0.55)';
    g.lineWidth = 1;
    for (let l = 1; l <= 8; l++) {
      const c = lo + l * (hi - lo) / 9;
      g.beginPath();
      for (let i = 0; i + 1 < ny; i++) {
        for (let k = 0; k + 1 < nx; k++) {
          // Corners counter-clockwise from (k, i); where an edge crosses c.
          const v = [z[i][k], z[i][k + 1], z[i + 1][k + 1], z[i + 1][k]];
          const p = [[ux(k), uy(i)], [ux(k + 1), uy(i)], [ux(k + 1), uy(i + 1)], [ux(k), uy(i + 1)]];
          const cuts = [];
          for (let e = 0; e < 4; e++) {
            const a = v[e], b = v[(e + 1) % 4];
            if ((a < c) !== (b < c)) {
              const f = (c - a) / (b - a), q = p[e], r = p[(e + 1) % 4];
              cuts.push([X(q[0] + f * (r[0] - q[0])), Y(q[1] + f * (r[1] - q[1]))]);
            }
          }
          for (let j = 0; j + 1 < cuts.length; j += 2) { g.moveTo(...cuts[j]); g.lineTo(...cuts[j + 1]); }
        }
      }
      g.stroke();
    }
  }

  // importanceBars fills box with one bar per parameter, largest first.
  function importanceBars(box, params, imp) {
    box.textContent = '';
    params.map((p, j) => [p.name, imp[j] || 0]).sort((a, b) => b[1] - a[1]).forEach(([name, v]) => {
      const row = document.createElement('div');
      row.className = 'imp';
      const label = document.createElement('span');
      label.textContent = name;
      const bar = document.createElement('span');
      bar.className = 'bar';
      bar.style.width = (100 * v).toFixed(1) + '%';
      const pct = document.createElement('span');
      pct.textContent = (100 * v).toFixed(1) + ' %';
      const track = document.createElement('span');
      track.className = 'track';
      track.appendChild(bar);
      row.append(label, track, pct);
      box.appendChild(row);
    });
  }

  // feasibleOutputs reports whether a trial's outputs satisfy every
  // constraint among the declared outputs.
  function feasibleOutputs(outputs, ys) {
    return outputs.every((o, k) => o.goal !== 'constraint' ||
      (o.feasible === 'at_least' ? ys[k] >= o.bound : ys[k] <= o.bound));
  }

  // pareto draws the completed trials of an objective with two objective
  // outputs in the plane of those outputs: feasible trials as blue dots,
  // infeasible ones as hollow red circles, and the evaluated Pareto set
  // (ids, the latest record's) as orange dots joined by its staircase. It
  // returns the number of trials drawn.
  function pareto(canvas, outputs, trials, ids) {
    const { g, w, h } = canvasIn(canvas, 360);
    const objs = [];
    outputs.forEach((o, k) => { if (o.goal !== 'constraint' && objs.length < 2) objs.push(k); });
    const done = trials.filter((t) => t.status === 'complete' && t.outputs && t.outputs.length === outputs.length);
    const left = 70, right = w - 12, top = 12, bottom = h - 40;
    if (objs.length < 2 || !done.length) { g.fillText('No completed trial yet.', left, top + 20); return 0; }
    const [a, b] = objs;
    const range = (k) => {
      let lo = Infinity, hi = -Infinity;
      done.forEach((t) => { lo = Math.min(lo, t.outputs[k]); hi = Math.max(hi, t.outputs[k]); });
      return hi > lo ? [lo, hi] : [lo - 1, hi + 1];
    };
    const [ax0, ax1] = range(a), [by0, by1] = range(b);
    const X = (v) => left + (v - ax0) / (ax1 - ax0) * (right - left);
    const Y = (v) => bottom - (v - by0) / (by1 - by0) * (bottom - top);
    g.strokeStyle = '#555';
    g.strokeRect(left, top, right - left, bottom - top);
    g.fillStyle = '#222';
    g.textAlign = 'center';
    g.fillText(outputs[a].name + ' (' + outputs[a].goal + ')', (left + right) / 2, h - 8);
    [[ax0, left], [ax1, right]].forEach(([v, x]) => g.fillText(fmtTick(v), x, bottom + 16));
    g.textAlign = 'right';
    [[by0, bottom], [by1, top + 10]].forEach(([v, y]) => g.fillText(fmtTick(v), left - 4, y));
    g.save(); g.translate(14, (top + bottom) / 2); g.rotate(-Math.PI / 2); g.textAlign = 'center';
    g.fillText(outputs[b].name + ' (' + outputs[b].goal + ')', 0, 0); g.restore();
    done.forEach((t) => {
      g.beginPath();
      g.arc(X(t.outputs[a]), Y(t.outputs[b]), 3.5, 0, 2 * Math.PI);
      if (feasibleOutputs(outputs, t.outputs)) { g.fillStyle = '#3b6fb6'; g.fill(); } else { g.strokeStyle = '#c0392b'; g.stroke(); }
    });
    const set = new Set(ids || []);
    const front = done.filter((t) => set.has(t.id)).sort((p, q) => p.outputs[a] - q.outputs[a]);
    g.strokeStyle = g.fillStyle = '#e67e22';
    g.beginPath();
    front.forEach((t, i) => {
      const x = X(t.outputs[a]), y = Y(t.outputs[b]);
      if (i) { g.lineTo(x, Y(front[i - 1].outputs[b])); g.lineTo(x, y); } else g.moveTo(x, y);
    });
    g.stroke();
    front.forEach((t) => { g.beginPath(); g.arc(X(t.outputs[a]), Y(t.outputs[b]), 4.5, 0, 2 * Math.PI); g.fill(); });
    g.textAlign = 'left';
    return done.length;
  }

  window.tesboCharts = { fmtTick, logValues, numValues, axisFor, paramText, unit, fitted, viridis, parallel, contour, importanceBars, pareto };
})();
