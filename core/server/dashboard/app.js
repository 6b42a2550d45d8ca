// sluice dashboard: polls the admin's JSON endpoints (/stats/summary, /clusters) every second and
// draws the last few minutes as SVG line charts. Read-only: nothing here sends a POST.
//
// Rates and recent percentiles come from the difference of two consecutive summaries (counters
// are cumulative since start), percentiles by the rule of core/stats/quantile.h (Prometheus'
// histogram_quantile: linear interpolation inside the bucket holding the rank).
// History is a fixed-size ring per listener, so a page left open for days uses constant memory.
'use strict';

(function () {
  const POLL_MS = 1000;
  const HISTORY = 300;  // points kept per series: 5 minutes at one per second
  const TIMEOUT_MS = 2500;
  const MAX_RETRY_MS = 5000;
  const CLASSES = ['2xx', '3xx', '4xx', '5xx'];
  const TOTAL = '';  // history key of the all-listeners series
  const SVG_NS = 'http://www.w3.org/2000/svg';

  const $ = (id) => document.getElementById(id);

  // ---- errors: anything unexpected is shown in #error (the integration test asserts it empty)

  const errors = [];  // the distinct messages shown, at most MAX_ERRORS (newest kept)
  const MAX_ERRORS = 5;
  function showError(message) {
    const el = $('error');
    const line = 'dashboard error: ' + message;
    if (!el || errors.includes(line)) return;
    errors.push(line);
    if (errors.length > MAX_ERRORS) errors.shift();
    el.hidden = false;
    el.textContent = errors.join('\n');
  }
  window.addEventListener('error', (e) => showError(e.message || String(e)));
  window.addEventListener('unhandledrejection', (e) => showError(String(e.reason)));
  document.addEventListener('securitypolicyviolation',
      (e) => showError('blocked by Content-Security-Policy: ' + e.violatedDirective));

  // ---- a fixed-size ring of points

  class Ring {
    constructor(size) {
      this.size = size;
      this.items = new Array(size);
      this.start = 0;
      this.length = 0;
    }
    push(item) {
      if (this.length < this.size) {
        this.items[(this.start + this.length) % this.size] = item;
        this.length++;
      } else {
        this.items[this.start] = item;
        this.start = (this.start + 1) % this.size;
      }
    }
    toArray() {
      const out = [];
      for (let i = 0; i < this.length; i++) out.push(this.items[(this.start + i) % this.size]);
      return out;
    }
    last() {
      return this.length ? this.items[(this.start + this.length - 1) % this.size] : null;
    }
  }

  // ---- numbers from summaries

  // The q-quantile of a histogram {le: [bounds], counts: [per bucket, +Inf last]}, or null.
  function quantile(le, counts, q) {
    let total = 0;
    for (const c of counts) total += c;
    if (total === 0 || counts.length !== le.length + 1) return null;
    const rank = q * total;
    let below = 0;
    for (let i = 0; i < counts.length; i++) {
      const inBucket = counts[i];
      if (inBucket > 0 && below + inBucket >= rank) {
        if (i === le.length) return le.length ? le[le.length - 1] : 0;
        const lower = i === 0 ? 0 : le[i - 1];
        const within = Math.min(1, Math.max(0, (rank - below) / inBucket));
        return lower + (le[i] - lower) * within;
      }
      below += inBucket;
    }
    return le.length ? le[le.length - 1] : 0;
  }

  function responses(m) {
    let n = 0;
    for (const c of CLASSES) n += m.responses[c] || 0;
    return n;
  }

  // One chart point from the metrics of a listener (or the total) at two moments; null values
  // where nothing happened in between (no responses: no error share, no percentile).
  function point(before, now, seconds, t) {
    const p = {t: t, rate: null, err5: null, err4: null, p50: null, p90: null, p99: null};
    const done = responses(now) - responses(before);
    if (seconds <= 0 || done < 0) return p;  // counters went back: a restart
    p.rate = done / seconds;
    if (done > 0) {
      p.err5 = 100 * (now.responses['5xx'] - before.responses['5xx']) / done;
      p.err4 = 100 * (now.responses['4xx'] - before.responses['4xx']) / done;
    }
    const h1 = now.duration_seconds;
    const h0 = before.duration_seconds;
    if (h1.counts.length === h0.counts.length) {
      const delta = h1.counts.map((c, i) => Math.max(0, c - h0.counts[i]));
      for (const [key, q] of [['p50', 0.5], ['p90', 0.9], ['p99', 0.99]]) {
        const v = quantile(h1.le, delta, q);
        p[key] = v === null ? null : v * 1000;
      }
    }
    return p;
  }

  // ---- state

  const state = {
    prev: null,             // the previous summary
    history: new Map(),     // listener name (TOTAL for all) -> Ring of points
    hostTotals: new Map(),  // "cluster/address" -> total_requests at the previous poll
    hostRates: new Map(),   // "cluster/address" -> requests/s
    failures: 0,
    lastSummary: null,
    lastClusters: null,
  };

  function record(summary) {
    const prev = state.prev;
    const keys = new Map([[TOTAL, summary.total]]);
    for (const l of summary.listeners) keys.set(l.name, l);
    for (const key of Array.from(state.history.keys())) {
      if (!keys.has(key)) state.history.delete(key);  // a listener removed by a reload
    }
    const restarted = prev !== null && prev.started_at !== summary.started_at;
    const seconds = prev ? (summary.time_ms - prev.time_ms) / 1000 : 0;
    for (const [key, now] of keys) {
      if (!state.history.has(key)) state.history.set(key, new Ring(HISTORY));
      const ring = state.history.get(key);
      let before = null;
      if (prev && !restarted) {
        before = key === TOTAL ? prev.total : prev.listeners.find((l) => l.name === key);
      }
      // No earlier value (first poll, new listener, restart): a gap in the lines.
      ring.push(before ? point(before, now, seconds, summary.time_ms) :
                         {t: summary.time_ms, rate: null, err5: null, err4: null,
                          p50: null, p90: null, p99: null});
    }
    state.prev = summary;
  }

  function recordHosts(clusters, seconds) {
    const seen = new Set();
    for (const c of clusters.clusters) {
      for (const h of c.hosts) {
        const key = c.name + '/' + h.address;
        seen.add(key);
        const before = state.hostTotals.get(key);
        state.hostRates.set(key, before !== undefined && seconds > 0 && h.total_requests >= before ?
            (h.total_requests - before) / seconds : null);
        state.hostTotals.set(key, h.total_requests);
      }
    }
    for (const key of Array.from(state.hostTotals.keys())) {
      if (!seen.has(key)) {
        state.hostTotals.delete(key);
        state.hostRates.delete(key);
      }
    }
  }

  // ---- formatting

  function fmtDuration(s) {
    s = Math.max(0, Math.floor(s));
    const d = Math.floor(s / 86400);
    const h = Math.floor((s % 86400) / 3600);
    const m = Math.floor((s % 3600) / 60);
    const parts = [];
    if (d) parts.push(d + 'd');
    if (d || h) parts.push(h + 'h');
    if (d || h || m) parts.push(m + 'm');
    parts.push((s % 60) + 's');
    return parts.join(' ');
  }

  function fmtNum(v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return '–';
    if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en-US');
    if (Math.abs(v) >= 100) return v.toFixed(0);
    return v.toFixed(digits === undefined ? 1 : digits);
  }

  function fmtMs(seconds) {
    return seconds === null || seconds === undefined ? '–' : fmtNum(seconds * 1000, 2) + ' ms';
  }

  function fmtTime(unix) {
    return new Date(unix * 1000).toLocaleTimeString('en-GB');
  }

  // ---- SVG charts

  function svgEl(name, attrs) {
    const el = document.createElementNS(SVG_NS, name);
    for (const k in attrs) el.setAttribute(k, attrs[k]);
    return el;
  }

  // A y axis for values up to `max` (at least `floor`): about four steps of 1, 2, 2.5 or 5 × 10^k.
  function yAxis(max, floor) {
    const raw = Math.max(max, floor) / 4;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    let step = 10 * p;
    for (const m of [1, 2, 2.5, 5]) {
      if (m * p >= raw) {
        step = m * p;
        break;
      }
    }
    return {step: step, max: step * Math.max(1, Math.ceil(Math.max(max, floor) / step - 1e-9))};
  }

  // Draws `series` ([{label, key, colour}], colour 0-2: blue, amber, red) of `points` into `svg`, over the last
  // HISTORY polls ending at the newest point. Sets data-points to the points drawn.
  function drawChart(svg, legend, points, series, floor) {
    const width = Math.max(200, Math.round(svg.getBoundingClientRect().width) || 600);
    const height = 180;
    const left = 48;
    const right = 8;
    const top = 8;
    const bottom = 20;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
    svg.setAttribute('width', width);
    svg.setAttribute('height', height);

    let max = 0;
    for (const p of points) {
      for (const s of series) {
        if (p[s.key] !== null && p[s.key] > max) max = p[s.key];
      }
    }
    const axis = yAxis(max, floor);
    const yMax = axis.max;
    const tEnd = points.length ? points[points.length - 1].t : Date.now();
    const span = HISTORY * POLL_MS;
    const x = (t) => left + (width - left - right) * (1 - (tEnd - t) / span);
    const y = (v) => top + (height - top - bottom) * (1 - v / yMax);

    for (let v = 0; v <= yMax + axis.step / 2; v += axis.step) {
      svg.appendChild(svgEl('line', {class: 'grid', x1: left, x2: width - right, y1: y(v), y2: y(v)}));
      const label = svgEl('text', {class: 'axis', x: left - 6, y: y(v) + 4, 'text-anchor': 'end'});
      label.textContent = fmtNum(v, axis.step < 1 ? 2 : axis.step < 10 && axis.step % 1 ? 1 : 0);
      svg.appendChild(label);
    }
    const minutes = span / 60000;
    for (let m = 0; m <= minutes; m++) {
      const label = svgEl('text', {class: 'axis', x: x(tEnd - m * 60000), y: height - 4,
        'text-anchor': m === 0 ? 'end' : 'middle'});
      label.textContent = m === 0 ? 'now' : '−' + m + ' min';
      svg.appendChild(label);
    }

    let drawn = 0;
    while (legend.firstChild) legend.removeChild(legend.firstChild);
    series.forEach((s, i) => {
      let d = '';
      let pen = false;
      for (const p of points) {
        const v = p[s.key];
        if (v === null || v === undefined || tEnd - p.t > span) {
          pen = false;
          continue;
        }
        d += (pen ? 'L' : 'M') + x(p.t).toFixed(1) + ' ' + y(v).toFixed(1) + ' ';
        pen = true;
        drawn++;
      }
      const colour = 's' + (s.colour === undefined ? i : s.colour);
      if (d) svg.appendChild(svgEl('path', {class: 'line ' + colour, d: d.trim(), 'data-series': s.key}));
      const last = points.length ? points[points.length - 1][s.key] : null;
      const item = document.createElement('span');
      const swatch = document.createElement('span');
      swatch.className = 'swatch ' + colour;
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(s.label + ' ' + fmtNum(last, 2)));
      legend.appendChild(item);
    });
    if (drawn === 0) {
      const note = svgEl('text', {class: 'empty', x: (left + width) / 2, y: height / 2,
        'text-anchor': 'middle'});
      note.textContent = 'waiting for data…';
      svg.appendChild(note);
    }
    svg.setAttribute('data-points', String(drawn));
  }

  function drawCharts() {
    const select = $('listener');
    const ring = state.history.get(select.value) || state.history.get(TOTAL);
    const points = ring ? ring.toArray() : [];
    drawChart($('chart-rate'), $('legend-rate'), points, [{label: 'req/s', key: 'rate'}], 1);
    drawChart($('chart-errors'), $('legend-errors'), points,
        [{label: '4xx %', key: 'err4', colour: 1}, {label: '5xx %', key: 'err5', colour: 2}], 1);
    drawChart($('chart-latency'), $('legend-latency'), points,
        [{label: 'p50', key: 'p50'}, {label: 'p90', key: 'p90'}, {label: 'p99', key: 'p99'}], 1);
  }

  // ---- tables

  function cell(row, text, cls) {
    const td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    row.appendChild(td);
    return td;
  }

  function renderHeader(s) {
    $('version').textContent = 'v' + s.version;
    const st = $('fact-state');
    st.textContent = s.draining ? 'draining' : 'serving';
    st.className = s.draining ? 'draining' : '';
    $('fact-uptime').textContent = fmtDuration(s.uptime_s);
    $('fact-config').textContent = String(s.config_version);
    $('fact-reloads').textContent = s.reloads_ok + ' ok, ' + s.reloads_failed + ' refused';
    $('fact-last-reload').textContent = s.last_reload ?
        fmtTime(s.last_reload.at) + (s.last_reload.ok ? ' (ok)' : ' (refused)') : 'never';
    $('fact-workers').textContent = String(s.workers);
  }

  function renderListeners(s) {
    const select = $('listener');
    const names = s.listeners.map((l) => l.name);
    const have = Array.from(select.options).slice(1).map((o) => o.value);
    if (names.join('\n') !== have.join('\n')) {
      const chosen = select.value;
      while (select.options.length > 1) select.remove(1);
      for (const n of names) select.add(new Option(n, n));
      select.value = names.includes(chosen) ? chosen : '';
    }
    const body = $('listeners').tBodies[0];
    while (body.firstChild) body.removeChild(body.firstChild);
    for (const l of s.listeners) {
      const row = document.createElement('tr');
      row.dataset.listener = l.name;
      cell(row, l.name);
      cell(row, l.address);
      cell(row, l.tls ? 'TLS' : 'plain');
      cell(row, l.context_path || '–');
      const ring = state.history.get(l.name);
      cell(row, fmtNum(ring && ring.last() ? ring.last().rate : null), 'num');
      for (const c of CLASSES) cell(row, String(l.responses[c]), 'num');
      cell(row, String(l.refused), 'num');
      cell(row, String(l.connections_active), 'num');
      const d = l.duration_seconds;
      cell(row, [d.p50, d.p90, d.p99].map(fmtMs).join(' / '), 'num');
      body.appendChild(row);
    }
  }

  function renderClusters(clusters) {
    const root = $('clusters');
    while (root.firstChild) root.removeChild(root.firstChild);
    for (const c of clusters.clusters) {
      const box = document.createElement('div');
      box.className = 'cluster';
      box.dataset.cluster = c.name;
      const head = document.createElement('div');
      head.className = 'cluster-head';
      const name = document.createElement('h3');
      name.textContent = c.name;
      head.appendChild(name);
      const badge = document.createElement('span');
      badge.className = 'badge';
      badge.textContent = c.balancer;
      head.appendChild(badge);
      const healthy = c.hosts.filter((h) => h.healthy).length;
      const count = document.createElement('span');
      count.className = c.hosts.length ? 'muted' : 'nohosts';
      count.textContent = c.hosts.length ? healthy + ' of ' + c.hosts.length + ' hosts healthy' +
                                               (c.panic ? ' (panic: using every host)' : '') :
                                           'no hosts';
      head.appendChild(count);
      box.appendChild(head);
      if (c.hosts.length) {
        const table = document.createElement('table');
        const hrow = table.createTHead().insertRow();
        for (const [t, cls] of [['address'], ['weight', 'num'], ['health'], ['in flight', 'num'],
                                ['total', 'num'], ['req/s', 'num']]) {
          const th = document.createElement('th');
          th.textContent = t;
          if (cls) th.className = cls;
          hrow.appendChild(th);
        }
        const body = table.createTBody();
        for (const h of c.hosts) {
          const row = body.insertRow();
          row.dataset.host = h.address;
          cell(row, h.address);
          cell(row, String(h.weight), 'num');
          // Active health and ejection are separate verdicts; the host takes traffic when both
          // allow it (h.healthy).
          const label = h.ejected ? 'ejected' : h.healthy ? 'healthy' : 'unhealthy';
          cell(row, label, 'health ' + (h.healthy ? 'up' : 'down'));
          cell(row, String(h.active_requests), 'num');
          cell(row, String(h.total_requests), 'num');
          cell(row, fmtNum(state.hostRates.get(c.name + '/' + h.address)), 'num');
        }
        box.appendChild(table);
      }
      root.appendChild(box);
    }
  }

  function render() {
    if (state.lastSummary) {
      renderHeader(state.lastSummary);
      renderListeners(state.lastSummary);
    }
    if (state.lastClusters) renderClusters(state.lastClusters);
    drawCharts();
    $('window').textContent = 'last ' + (HISTORY * POLL_MS / 60000) + ' minutes, every ' +
        (POLL_MS / 1000) + ' s';
  }

  // ---- polling

  class FetchError extends Error {}

  async function getJson(path) {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), TIMEOUT_MS);
    try {
      const r = await fetch(path, {cache: 'no-store', signal: ctl.signal,
                                   headers: {'Accept': 'application/json'}});
      if (!r.ok) throw new FetchError(path + ': HTTP ' + r.status);
      return await r.json();
    } catch (e) {
      throw e instanceof FetchError ? e : new FetchError(path + ': ' + (e.message || e));
    } finally {
      clearTimeout(timer);
    }
  }

  function setStatus(live, detail) {
    const el = $('status');
    el.dataset.state = live ? 'live' : 'disconnected';
    el.textContent = live ? 'live' : 'disconnected — ' + detail;
    document.body.classList.toggle('stale', !live);
  }

  async function tick() {
    let delay = POLL_MS;
    try {
      const [summary, clusters] = await Promise.all([getJson('/stats/summary'),
                                                     getJson('/clusters')]);
      const seconds = state.prev ? (summary.time_ms - state.prev.time_ms) / 1000 : 0;
      record(summary);
      recordHosts(clusters, seconds);
      state.lastSummary = summary;
      state.lastClusters = clusters;
      state.failures = 0;
      setStatus(true);
      render();
    } catch (e) {
      if (!(e instanceof FetchError)) {
        showError(e && e.stack ? e.stack : String(e));
      } else {
        state.failures++;
        delay = Math.min(MAX_RETRY_MS, POLL_MS * Math.pow(2, state.failures - 1));
        // The next answer starts new lines: no rate across the outage.
        state.prev = null;
        state.hostTotals.clear();
        setStatus(false, 'retrying in ' + Math.round(delay / 1000) + ' s (' + e.message + ')');
      }
    }
    setTimeout(tick, delay);
  }

  $('listener').addEventListener('change', drawCharts);
  window.addEventListener('resize', drawCharts);
  tick();
})();
