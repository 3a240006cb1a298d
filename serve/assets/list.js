// The study list of tesbo's web view: the server renders it once; this
// script keeps it current (it reads /api/studies every few seconds, not
// with ?static=1), sorts it by any column (click a heading; again to
// reverse) and filters it by text and state. Cells are set with
// textContent: names from the database are never markup.
(function () {
  'use strict';
  const EVERY = 2000; // ms between reads of the list
  const STATIC = ['1', 'true', 'yes'].includes(new URLSearchParams(location.search).get('static'));
  const L = { studies: null, sortKey: 'created', sortDir: 1, q: '', state: '', polls: 0, error: '' };
  window.tesboList = L; // for the browser test and the curious

  const $ = (id) => document.getElementById(id);
  const fmt = (v) => (v === null || v === undefined || Number.isNaN(v)) ? '–' : String(+(+v).toPrecision(6));
  const td = (text, cls, title) => {
    const e = document.createElement('td');
    e.textContent = text;
    if (cls) e.className = cls;
    if (title) e.title = title;
    return e;
  };

  function ago(iso) {
    const t = new Date(iso), d = (Date.now() - t.getTime()) / 1000;
    if (d < 0) return 'just now';
    if (d < 60) return Math.floor(d) + ' s ago';
    if (d < 3600) return Math.floor(d / 60) + ' min ago';
    if (d < 48 * 3600) return Math.floor(d / 3600) + ' h ago';
    return t.toLocaleString();
  }

  // The value a column sorts by.
  const KEYS = {
    name: (s) => s.name, objective: (s) => s.objective, acquisition: (s) => s.acquisition, state: (s) => s.state,
    complete: (s) => s.complete, best_observed: (s) => s.best_observed, recommendation: (s) => s.recommendation,
    regret: (s) => s.regret, last_activity: (s) => s.last_activity, created: (s) => s.created,
  };

  function visible() {
    const q = L.q.toLowerCase();
    const key = KEYS[L.sortKey];
    return L.studies
      .filter((s) => (!L.state || s.state === L.state) &&
        (!q || [s.name, s.objective, s.acquisition, s.state].some((f) => String(f).toLowerCase().includes(q))))
      .sort((a, b) => {
        const x = key(a), y = key(b);
        if (x === y) return 0;
        if (x === null || x === undefined) return 1; // missing values last, either way
        if (y === null || y === undefined) return -1;
        return (x < y ? -1 : 1) * L.sortDir;
      });
  }

  function render() {
    if (!L.studies) return;
    const body = $('studies').tBodies[0];
    body.textContent = '';
    const rows = visible();
    for (const s of rows) {
      const r = body.insertRow();
      const name = document.createElement('td');
      const a = document.createElement('a');
      a.href = '/study/' + encodeURIComponent(s.name);
      a.textContent = s.name;
      name.appendChild(a);
      r.append(name,
        td(s.objective + (s.minimize ? ' (min)' : '')),
        td(s.acquisition),
        td(s.state, 'state ' + s.state, s.holder || ''),
        td(evaluations(s), 'num'),
        td(fmt(s.best_observed), 'num'), td(fmt(s.recommendation), 'num'), td(fmt(s.regret), 'num'),
        td(ago(s.last_activity), '', new Date(s.last_activity).toLocaleString()));
    }
    $('shown').textContent = rows.length + ' of ' + L.studies.length + ' studies';
    const empty = $('empty');
    if (empty) empty.hidden = L.studies.length > 0;
    for (const th of $('studies').tHead.rows[0].cells) {
      th.className = th.dataset.key === L.sortKey ? (L.sortDir > 0 ? 'asc' : 'desc') : '';
    }
  }

  async function load() {
    try {
      const r = await fetch('/api/studies', { credentials: 'same-origin', cache: 'no-store' });
      const body = await r.json();
      if (!r.ok) throw new Error(body.error || r.statusText);
      L.studies = body.studies;
      L.error = '';
      render();
    } catch (e) {
      L.error = e.message;
      $('shown').textContent = 'The list cannot be read: ' + e.message;
    } finally {
      L.polls++;
      if (!STATIC) setTimeout(load, EVERY);
    }
  }

  for (const th of $('studies').tHead.rows[0].cells) {
    th.addEventListener('click', () => {
      L.sortDir = L.sortKey === th.dataset.key ? -L.sortDir : 1;
      L.sortKey = th.dataset.key;
      render();
    });
  }
  $('q').addEventListener('input', (e) => { L.q = e.target.value; render(); });
  $('state').addEventListener('change', (e) => { L.state = e.target.value; render(); });
  load();
})();

// evaluations is a study's evaluations against its budget: its own
// finished trials (complete, stopped early or failed; not those imported
// or attached, which use up no budget) / budget, with the others named.
function evaluations(s) {
  const notes = [];
  if (s.pruned) notes.push(s.pruned + ' stopped');
  if (s.failed) notes.push(s.failed + ' failed');
  if (s.outside) notes.push(s.outside + ' imported or attached');
  const own = s.complete + s.pruned + s.failed - s.outside;
  return own + ' / ' + s.budget + (notes.length ? ' (' + notes.join(', ') + ')' : '');
}
