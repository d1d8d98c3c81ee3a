/* knee report: draws the charts of the data object (#knee-data, schema knee-report/1) with the
 * embedded uPlot. Each chart's figure says in its title which interval it covers; a chart an
 * input cannot back is replaced by a note saying why. When every chart is drawn, each figure
 * carries data-box="x,y,w,h" (its plot area in page pixels) and data-scale-KEY="min,max" (the
 * ranges it drew with), and #knee-status says "ready", so a headless browser can check the
 * pictures (tests/e2e/report_browser.sh, report_charts.sh). */
(function () {
  'use strict';

  var status = document.getElementById('knee-status');
  var charts = document.getElementById('charts');
  var data = JSON.parse(document.getElementById('knee-data').textContent);
  var runs = data.runs;
  var plots = []; /* {u, fig, build} */

  var PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22'];
  var CLASS = {
    ok: '#1f77b4', service: '#ff7f0e', rejected: '#9467bd', http_error: '#d62728', invalid: '#8c564b',
    transport: '#e377c2', timeout: '#bcbd22', cancelled: '#17becf', dropped: '#d62728'
  };
  var CLASS_LABEL = {
    ok: 'latency, ok', rejected: 'latency, rejected', http_error: 'latency, http_error', invalid: 'latency, invalid',
    transport: 'latency, transport', timeout: 'latency, timeout', cancelled: 'latency, cancelled',
    service: 'service time T5 - T1'
  };

  /* ---- small helpers ------------------------------------------------------------------- */

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

  function fmtMs(v) {
    if (v == null || !isFinite(v)) return '-';
    var a = Math.abs(v);
    if (a >= 1000) return v.toFixed(0);
    if (a >= 100) return v.toFixed(1);
    if (a >= 10) return v.toFixed(2);
    if (a >= 1) return v.toFixed(3);
    return v.toPrecision(3);
  }

  function fmtS(v) {
    if (v == null || !isFinite(v)) return '-';
    return Math.abs(v) >= 100 ? v.toFixed(1) : v.toFixed(3);
  }

  function fmtCount(v) {
    return v == null ? '-' : Math.round(v).toLocaleString('en-US');
  }

  function pct(x) { /* x = 1/(1-p) -> "99.9%" */
    if (x == null) return '';
    var p = 100 * (1 - 1 / x);
    if (p <= 0) return '0%';
    var d = Math.max(0, Math.min(6, Math.ceil(-Math.log10(100 - p) + 1)));
    var t = p.toFixed(d);
    if (t.indexOf('.') >= 0) t = t.replace(/0+$/, '').replace(/\.$/, '');
    return t + '%';
  }

  /* Axis labels: up to 3 significant digits, no trailing zeros; uPlot passes null for the
   * ticks it leaves unlabelled on a log axis. */
  function fmtAxis(v) {
    if (v == null || !isFinite(v)) return '';
    var a = Math.abs(v);
    return a >= 1000 ? Math.round(v).toLocaleString('en-US') : String(Number(v.toPrecision(3)));
  }

  function axisValues(u, vals) { return vals.map(fmtAxis); }

  function windowText(run) {
    if (!run.window_s) return '';
    var w = 'planned ' + fmtS(run.window_s[0]) + ' s to ' + fmtS(run.window_s[1]) + ' s after the start';
    if (run.warmup_s > 0) w += ', warm-up (' + fmtS(run.warmup_s) + ' s) excluded';
    return w;
  }

  function section(title, intro) {
    var s = el('section', 'charts');
    s.appendChild(el('h2', null, title));
    if (intro) s.appendChild(el('p', 'intro', intro));
    var row = el('div', 'row');
    s.appendChild(row);
    charts.appendChild(s);
    return row;
  }

  function figure(row, id, title, wide) {
    var fig = el('figure', 'chart' + (wide || runs.length === 1 ? ' wide' : ''));
    fig.id = id;
    fig.appendChild(el('figcaption', null, title));
    var controls = el('div', 'controls');
    fig.appendChild(controls);
    var box = el('div', 'plot');
    fig.appendChild(box);
    row.appendChild(fig);
    return fig;
  }

  function omitted(row, id, title, why) {
    var fig = el('figure', 'chart omitted' + (runs.length === 1 ? ' wide' : ''));
    fig.id = id;
    fig.appendChild(el('figcaption', null, title));
    fig.appendChild(el('p', 'note', 'Not drawn: ' + why));
    row.appendChild(fig);
  }

  function plotWidth(fig) {
    var w = fig.clientWidth - 24;
    return Math.max(320, w);
  }

  function button(fig, label, onclick) {
    var b = el('button', null, label);
    b.type = 'button';
    b.addEventListener('click', onclick);
    fig.querySelector('.controls').appendChild(b);
    return b;
  }

  function tooltip(fig) {
    var t = el('div', 'tip');
    fig.querySelector('.plot').appendChild(t);
    return t;
  }

  /* A chart in fig, drawn once every figure is on the page (so its width is the final
   * layout's) and again when an option changes: build(width) returns {opts, data}. */
  function mount(fig, build) {
    var box = fig.querySelector('.plot');
    var p = {fig: fig, build: build, u: null};
    p.draw = function (w) {
      if (p.u) p.u.destroy();
      var b = build(w || plotWidth(fig));
      p.u = new uPlot(b.opts, b.data, box);
    };
    plots.push(p);
    return p;
  }

  function ctxFont(u, px) {
    return Math.round(px * uPlot.pxRatio) + 'px system-ui, sans-serif';
  }

  /* A shaded band on the time axis for the warm-up, and a dashed line where each --stages
   * stage begins, with its number. */
  function warmupHook(run) {
    return function (u) {
      stageMarks(u, run);
      if (!(run.warmup_s > 0)) return;
      var x0 = u.valToPos(u.scales.x.min, 'x', true), x1 = u.valToPos(Math.min(run.warmup_s, u.scales.x.max), 'x', true);
      if (run.warmup_s <= u.scales.x.min || x1 <= x0) return;
      var ctx = u.ctx;
      ctx.save();
      ctx.fillStyle = 'rgba(128,128,128,0.12)';
      ctx.fillRect(x0, u.bbox.top, x1 - x0, u.bbox.height);
      ctx.fillStyle = '#666';
      ctx.font = ctxFont(u, 11);
      ctx.fillText('warm-up', x0 + 4 * uPlot.pxRatio, u.bbox.top + 12 * uPlot.pxRatio);
      ctx.restore();
    };
  }

  function stageMarks(u, run) {
    var st = run.stage_starts_s;
    if (!st || !st.length) return;
    var ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = 'rgba(90,90,160,0.55)';
    ctx.fillStyle = '#558';
    ctx.setLineDash([4 * uPlot.pxRatio, 4 * uPlot.pxRatio]);
    ctx.font = ctxFont(u, 10);
    for (var i = 0; i < st.length; i++) {
      if (st[i] < u.scales.x.min || st[i] > u.scales.x.max) continue;
      var x = u.valToPos(st[i], 'x', true);
      if (i > 0) {
        ctx.beginPath();
        ctx.moveTo(x, u.bbox.top);
        ctx.lineTo(x, u.bbox.top + u.bbox.height);
        ctx.stroke();
      }
      ctx.fillText('stage ' + (i + 1), x + 3 * uPlot.pxRatio, u.bbox.top + u.bbox.height - 4 * uPlot.pxRatio);
    }
    ctx.restore();
  }

  function timeAxis(label) {
    return {label: label || 'seconds since the run start', values: axisValues};
  }

  /* ---- shared scales: the runs' panels of one kind draw on the same axes ------------------ */

  /* Each chart adds the extent of its data to its groups while the page is built, before any
   * chart is drawn; the range functions read the union when they draw. So two runs side by
   * side have the same x and y ranges, and a taller line is a larger number. A group also
   * holds the view options its charts share (log or linear), toggled for all at once. */
  var groups = {};

  function group(name) {
    return groups[name] || (groups[name] = {min: Infinity, max: -Infinity, posMin: Infinity, log: null, plots: []});
  }

  function extend(name, values) {
    var g = group(name);
    for (var i = 0; i < values.length; i++) {
      var v = values[i];
      if (v == null || !isFinite(v)) continue;
      if (v < g.min) g.min = v;
      if (v > g.max) g.max = v;
      if (v > 0 && v < g.posMin) g.posMin = v;
    }
  }

  function extentOf(values) {
    var lo = Infinity, hi = -Infinity;
    for (var i = 0; i < values.length; i++) {
      var v = values[i];
      if (v == null || !isFinite(v)) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    return [lo, hi];
  }

  /* An x range shared by the group, own = this chart's data extent: uPlot asks with the data
   * extent when it draws or resets and with the selection when the reader zooms in. */
  function xRange(name, own) {
    return function (u, mn, mx) {
      var g = group(name);
      var tol = 1e-9 * Math.max(1, Math.abs(own[1]));
      if (mn == null || mx == null || !(g.max > g.min) || (mn <= own[0] + tol && mx >= own[1] - tol)) return [g.min, g.max];
      return [mn, mx];
    };
  }

  /* A y range from zero to the group's largest value (rates, counts: zero is the baseline a
   * reader compares against), head = headroom above it. */
  function zeroRange(name, head, floor) {
    return function () {
      var g = group(name);
      return [0, Math.max(g.max > 0 ? g.max : 0, floor || 1) * (head || 1.1)];
    };
  }

  /* A log y range over the group's positive values, to whole powers of ten. */
  function logRange(name) {
    return function () {
      var g = group(name);
      if (!(g.posMin < Infinity)) return [1, 10];
      return uPlot.rangeLog(g.posMin, Math.max(g.max, g.posMin), 10, true);
    };
  }

  function joinGroup(p, name) {
    p.groups = (p.groups || []).concat([name]);
    group(name).plots.push(p);
  }

  /* A button that flips one view option of a group and redraws every chart in it. */
  function groupButton(fig, label, name, onWhenLog) {
    var g = group(name);
    var b = button(fig, label, function () {
      g.log = !g.log;
      document.querySelectorAll('button[data-group="' + name + '"]').forEach(function (x) {
        x.classList.toggle('on', g.log === onWhenLog);
      });
      g.plots.forEach(function (p) { p.draw(); });
    });
    b.setAttribute('data-group', name);
    b.classList.toggle('on', g.log === onWhenLog);
    return b;
  }

  /* ---- labels of vertical lines, placed so that none covers another ------------------------- */

  var LABEL_ROWS = 3;

  /* Text labels for vertical lines (percentile markers, the capacity), as elements over the
   * plot area so the browser lays them out and a test can measure them. Each goes right of its
   * line, or left of it when it would leave the plot, in the first of LABEL_ROWS rows where it
   * overlaps no label placed before; one that fits nowhere is not drawn over another but
   * listed under the chart (legend). items: [{v (x value), text, color}], in any order. */
  function placeLabels(u, legend, items, legendIntro) {
    var over = u.over;
    Array.prototype.slice.call(over.querySelectorAll('.vlabel')).forEach(function (e) { e.remove(); });
    var width = over.clientWidth, rows = [], left = [];
    for (var r = 0; r < LABEL_ROWS; r++) rows.push([]);
    items.slice().sort(function (a, b) { return a.v - b.v; }).forEach(function (it) {
      if (it.v == null || it.v < u.scales.x.min || it.v > u.scales.x.max) return;
      var e = el('span', 'vlabel', it.text);
      if (it.color) e.style.color = it.color;
      if (it.key) e.setAttribute('data-key', it.key);
      over.appendChild(e);
      var w = e.offsetWidth, h = e.offsetHeight, x = u.valToPos(it.v, 'x');
      var spots = [x + 3, x - 3 - w];
      for (var row = 0; row < LABEL_ROWS; row++) {
        for (var k = 0; k < spots.length; k++) {
          var a = spots[k], b = a + w;
          if (a < 1 || b > width - 1) continue;
          if (rows[row].some(function (s) { return a < s[1] + 4 && b > s[0] - 4; })) continue;
          rows[row].push([a, b]);
          e.style.left = Math.round(a) + 'px';
          e.style.top = Math.round(2 + row * (h + 1)) + 'px';
          return;
        }
      }
      e.remove();
      left.push(it.text);
    });
    if (!legend) return;
    legend.textContent = left.length ? legendIntro + left.join(', ') : '';
    legend.style.display = left.length ? '' : 'none';
  }

  function labelLegend(fig) {
    var p = el('p', 'note marks-legend');
    p.style.display = 'none';
    fig.appendChild(p);
    return p;
  }

  /* ---- 1. histogram with doubling buckets ------------------------------------------------- */

  function histSeries(run) { /* [{name, t(target obj), color}] : all first when there are several */
    var out = [];
    if (run.all) out.push({name: 'all', t: run.all, color: PALETTE[0]});
    run.targets.forEach(function (t, i) {
      out.push({name: t.name, t: t, color: PALETTE[(i + (run.all ? 1 : 0)) % PALETTE.length]});
    });
    return out.filter(function (s) { return s.t && s.t.count > 0 && s.t.hist.n.length; });
  }

  function bucketIndex(first, lo) { return lo <= 0 ? 0 : Math.round(Math.log2(lo / first)) + 1; }

  function histogram(row, run, ri) {
    var ss = histSeries(run);
    var title = run.name + ': latency ' + run.interval + ', doubling buckets' +
      (run.window_s ? ' (' + windowText(run) + ')' : '') + '; markers at p50, p90, p99, p99.9 and max';
    if (!ss.length) {
      omitted(row, 'chart-hist-' + ri, title, run.have.json && !run.have.requests && !run.have.hlog
        ? 'the run\'s JSON holds five percentiles, not a distribution: give its per-request log (--out) or --hlog too'
        : 'no request carries a latency');
      return;
    }
    var fig = figure(row, 'chart-hist-' + ri, title);
    var first = ss[0].t.hist.first_ms, lo = Infinity, hi = -Infinity;
    ss.forEach(function (s) {
      var a = bucketIndex(first, s.t.hist.lo_ms[0]);
      lo = Math.min(lo, a);
      hi = Math.max(hi, a + s.t.hist.n.length);
    });
    var xs = [];
    for (var b = lo; b <= hi; b++) xs.push(b === 0 ? first / 2 : first * Math.pow(2, b - 1));
    /* the runs' histograms share their axes: the buckets of all, the largest count of all */
    extend('hist-x', [xs[0], xs[xs.length - 1]]);
    ss.forEach(function (s) { extend('hist-y', s.t.hist.n); });
    var g = group('hist-y');
    if (g.log == null) g.log = false;
    var marks = ss[0].t.marks;
    var legend = labelLegend(fig);
    var p = mount(fig, function (w) {
      var logY = g.log;
      var d = [xs];
      ss.forEach(function (s) {
        var y = xs.map(function () { return logY ? null : 0; });
        var a = bucketIndex(first, s.t.hist.lo_ms[0]) - lo;
        s.t.hist.n.forEach(function (n, i) { y[a + i] = n > 0 ? n : (logY ? null : 0); });
        y[y.length - 1] = y[y.length - 2];
        d.push(y);
      });
      return {
        data: d,
        opts: {
          width: w, height: 320,
          scales: {x: {time: false, distr: 3, log: 2, range: xRange('hist-x', [xs[0], xs[xs.length - 1]])},
                   y: logY ? {distr: 3, log: 10, range: logRange('hist-y')} : {range: zeroRange('hist-y', 1.15)}},
          series: [{label: 'bucket (ms)', value: function (u, v, si, i) {
            return i == null || i >= xs.length - 1 ? '-' : fmtMs(xs[i]) + ' .. ' + fmtMs(xs[i + 1]);
          }}].concat(ss.map(function (s) {
            return {label: s.name, stroke: s.color, fill: s.color + '33', width: 1.5, paths: uPlot.paths.stepped({align: 1}),
              points: {show: false}, value: function (u, v) { return fmtCount(v); }};
          })),
          axes: [{label: 'latency (ms), log scale: each bucket twice as wide as the one before', values: axisValues},
                 {label: 'requests' + (logY ? ' (log)' : ''), size: 70, values: axisValues}],
          hooks: {draw: [function (u) { drawMarks(u, marks, legend); }]}
        }
      };
    });
    joinGroup(p, 'hist-y');
    groupButton(fig, 'log count', 'hist-y', true);
  }

  /* The percentile markers: dashed lines on the canvas, their labels placed over the plot. */
  function drawMarks(u, marks, legend) {
    if (!marks) return;
    var ctx = u.ctx, items = [];
    ctx.save();
    ctx.lineWidth = uPlot.pxRatio;
    ctx.strokeStyle = '#333';
    ctx.setLineDash([4 * uPlot.pxRatio, 3 * uPlot.pxRatio]);
    ['p50', 'p90', 'p99', 'p99.9', 'max'].forEach(function (k) {
      var v = marks[k];
      if (v == null || v < u.scales.x.min || v > u.scales.x.max) return;
      var x = Math.round(u.valToPos(v, 'x', true));
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      items.push({v: v, text: k + ' ' + fmtMs(v), key: k});
    });
    ctx.restore();
    placeLabels(u, legend, items, 'Not labelled on the chart, too close to the others: ');
  }

  function plotsOf(fig) {
    for (var i = 0; i < plots.length; i++) if (plots[i].fig === fig) return plots[i];
    return null;
  }

  /* ---- 2. percentile spectrum ---------------------------------------------------------------- */

  function spectrum(row) {
    var lines = [];
    runs.forEach(function (run) {
      var prefix = runs.length > 1 ? run.name + ': ' : '';
      var ts = run.all ? [{n: 'all', t: run.all}] : [];
      run.targets.forEach(function (t) { ts.push({n: t.name, t: t}); });
      ts.forEach(function (x) {
        if (!x.t || !x.t.spectrum || !x.t.spectrum.p.length) return;
        lines.push({label: prefix + x.n + ' latency', s: x.t.spectrum, dash: null});
        if (x.t.service_spectrum && x.t.service_spectrum.p.length)
          lines.push({label: prefix + x.n + ' service T5 - T1', s: x.t.service_spectrum, dash: [6, 4]});
      });
    });
    var intervals = runs.map(function (r) { return (runs.length > 1 ? r.name + ': ' : '') + r.interval; }).join('; ');
    var title = 'Percentile spectrum: latency at each percentile, x = 1/(1 - p) on a log axis (the HdrHistogram ' +
      'plotter\'s view); ' + intervals;
    if (!lines.length) {
      omitted(row, 'chart-spectrum', title, 'no input holds a latency distribution (a run JSON alone has five percentiles): give the per-request log or the hlog');
      return;
    }
    var fig = figure(row, 'chart-spectrum', title, true);
    /* one x axis: the union of every line's levels (uPlot.join aligns them) */
    var tables = lines.map(function (l) {
      return [l.s.p.map(function (p) { return 1 / (1 - p); }), l.s.v];
    });
    var joined = uPlot.join(tables);
    var logY = false;
    mount(fig, function (w) {
      return {
        data: joined,
        opts: {
          width: w, height: 360,
          scales: {x: {time: false, distr: 3, log: 10}, y: logY ? {distr: 3, log: 10} : {range: function (u, mn, mx) { return [0, mx * 1.05]; }}},
          series: [{label: 'percentile', value: function (u, v) { return v == null ? '-' : pct(v); }}].concat(lines.map(function (l, i) {
            return {label: l.label, stroke: PALETTE[i % PALETTE.length], width: 1.8, dash: l.dash || undefined,
              spanGaps: true, points: {show: false}, value: function (u, v) { return v == null ? '-' : fmtMs(v) + ' ms'; }};
          })),
          axes: [{label: 'percentile (1/(1-p), log scale)', values: function (u, v) { return v.map(pct); },
                  splits: function (u, ai, mn, mx) {
                    var out = [];
                    for (var x = 1; x <= mx * 1.0001; x *= 10) if (x >= mn * 0.9999) out.push(x);
                    return out;
                  }},
                 {label: 'latency (ms)' + (logY ? ', log' : ''), size: 70, values: axisValues}]
        }
      };
    });
    button(fig, 'log latency', function () { logY = !logY; this.classList.toggle('on', logY); plotsOf(fig).draw(); });
  }

  /* ---- 3. latency over time ---------------------------------------------------------------- */

  function squares(u, si) {
    var s = u.series[si], d = u.data[si], xs = d[0], ys = d[1];
    var r = Math.max(1, (s.points.size || 3) * uPlot.pxRatio / 2);
    var sx = u.scales.x, sy = u.scales.y, p = new Path2D();
    for (var i = 0; i < xs.length; i++) {
      var x = xs[i], y = ys[i];
      if (x < sx.min || x > sx.max || y < sy.min || y > sy.max) continue;
      var cx = u.valToPos(x, 'x', true), cy = u.valToPos(y, 'y', true);
      p.rect(cx - r, cy - r, 2 * r, 2 * r);
    }
    return {fill: p, stroke: null};
  }

  function nearest(u, left, top) { /* the kept request closest to the cursor, within 12 px */
    var best = null, bd = 144;
    for (var si = 1; si < u.series.length; si++) {
      if (!u.series[si].show || !u.series[si].key) continue;
      var xs = u.data[si][0], ys = u.data[si][1];
      var x0 = u.posToVal(left - 12, 'x'), x1 = u.posToVal(left + 12, 'x');
      var lo = 0, hi = xs.length;
      while (lo < hi) { var m = (lo + hi) >> 1; if (xs[m] < x0) lo = m + 1; else hi = m; }
      for (var i = lo; i < xs.length && xs[i] <= x1; i++) {
        var dx = u.valToPos(xs[i], 'x') - left, dy = u.valToPos(ys[i], 'y') - top, dd = dx * dx + dy * dy;
        if (dd < bd) { bd = dd; best = {t: xs[i], v: ys[i], key: u.series[si].key}; }
      }
    }
    return best;
  }

  function overTime(row, run, ri) {
    var sc = run.scatter;
    if (group('lat-y').log == null) group('lat-y').log = true; /* log latency unless the reader asks */
    var title = run.name + ': latency over time — every request at its planned send time T0, latency ' + run.interval +
      (run.mode === 'closed' ? '' : ' and service time T5 - T1') + ', by outcome class';
    if (!sc) {
      var tl = run.timeline && run.timeline.lat_p99_ms ? run.timeline : null;
      var jt = run.jtimeline;
      if (!tl && !jt) {
        omitted(row, 'chart-time-' + ri, title, 'no input has latencies over time');
        return;
      }
      var why = tl ? 'an hlog has no per-request times, so no scatter: these are the p50, p99 and max of each interval\'s histogram'
                   : 'the run\'s JSON has no per-request times, so no scatter: these are the p50, p99 and max of the requests completed in each second (knee run\'s timeline, warm-up included)';
      var fig = figure(row, 'chart-time-' + ri, run.name + ': latency per interval, ' + run.interval);
      fig.appendChild(el('p', 'note', why));
      var xs = tl ? tl.t : jt.t;
      var ys = tl ? [tl.lat_p50_ms, tl.lat_p99_ms, tl.lat_max_ms] : [jt.p50_ms, jt.p99_ms, jt.max_ms];
      var steps = closeSteps([xs].concat(ys), tl ? tl.interval_s : 1);
      var ownX = extentOf(steps[0]);
      extend('time-x', [0].concat(ownX));
      ys.forEach(function (y) { extend('lat-y', y); });
      var pi = mount(fig, function (w) {
        var linear = !group('lat-y').log;
        return {
          data: steps,
          opts: {
            width: w, height: 320,
            scales: {x: {time: false, range: xRange('time-x', ownX)}, y: linear ? {range: zeroRange('lat-y', 1.05)} : {distr: 3, log: 10, range: logRange('lat-y')}},
            series: [{label: 'interval start (s)', value: function (u, v) { return fmtS(v); }}].concat(['p50', 'p99', 'max'].map(function (n, i) {
              return {label: n, stroke: PALETTE[i], width: 1.5, paths: uPlot.paths.stepped({align: 1}), value: function (u, v) { return fmtMs(v) + ' ms'; }};
            })),
            axes: [timeAxis(), {label: 'latency (ms' + (linear ? ')' : ', log)'), size: 70, values: axisValues}],
            hooks: {drawClear: [warmupHook(run)]}
          }
        };
      });
      joinGroup(pi, 'lat-y');
      groupButton(fig, 'linear ms', 'lat-y', false);
      return;
    }
    var nreq = sc.series.reduce(function (a, s) { return s.key === 'service' ? a : a + s.n; }, 0);
    var fig2 = figure(row, 'chart-time-' + ri, title + '; each ' + fmtMs(sc.column_s * 1000) +
      ' ms column keeps its exact minimum and maximum per series and quarter-doubling band (' + fmtCount(nreq) + ' requests, never sampled)');
    var tip = tooltip(fig2);
    var dropped = sc.dropped;
    /* the runs' scatters share their axes: every run's time span, every run's latencies */
    var ownX = [Infinity, -Infinity];
    sc.series.forEach(function (s) {
      var e = extentOf(s.t);
      ownX = [Math.min(ownX[0], e[0]), Math.max(ownX[1], e[1])];
      extend('lat-y', s.v);
    });
    if (dropped && dropped.n_total) {
      var de = extentOf(dropped.t);
      ownX = [Math.min(ownX[0], de[0]), Math.max(ownX[1], de[1] + sc.column_s)];
    }
    extend('time-x', [0].concat(ownX));
    var p2 = mount(fig2, function (w) {
      var logY = group('lat-y').log;
      var series = [{}], d = [null];
      /* service time first, so the latencies are drawn over it */
      var ordered = sc.series.filter(function (s) { return s.key === 'service'; })
        .concat(sc.series.filter(function (s) { return s.key !== 'service'; }));
      ordered.forEach(function (s) {
        series.push({key: s.key, label: (CLASS_LABEL[s.key] || s.key) + ' (' + fmtCount(s.n) + ')', fill: CLASS[s.key] + (s.key === 'ok' || s.key === 'service' ? 'aa' : 'ff'),
          stroke: CLASS[s.key], paths: squares, points: {show: false, size: s.key === 'ok' || s.key === 'service' ? 2.5 : 3.5},
          facets: [{scale: 'x', auto: true}, {scale: 'y', auto: true}]});
        d.push([s.t, s.v]);
      });
      if (dropped && dropped.n_total) {
        series.push({key: null, label: 'dropped, never sent (' + fmtCount(dropped.n_total) + '): ticks at the bottom', stroke: CLASS.dropped, fill: CLASS.dropped,
          paths: function () { return null; }, facets: [{scale: 'x', auto: false}, {scale: 'y', auto: false}]});
        d.push([[], []]);
      }
      return {
        data: d,
        opts: {
          mode: 2, width: w, height: 380,
          scales: {x: {time: false, range: xRange('time-x', ownX)}, y: logY ? {distr: 3, log: 10, range: logRange('lat-y')} : {range: zeroRange('lat-y', 1.05)}},
          legend: {live: false},
          cursor: {drag: {x: true, y: true, uni: 20}},
          series: series,
          axes: [timeAxis('planned send time T0, seconds since the run start'),
                 {label: 'milliseconds' + (logY ? ' (log)' : ''), size: 70, values: axisValues}],
          hooks: {
            drawClear: [warmupHook(run)],
            draw: [function (u) { drawDropped(u, dropped, sc.column_s); }],
            setScale: [function (u, key) { if (key === 'x') u.series.forEach(function (s) { s._paths = null; }); }],
            setCursor: [function (u) {
              var l = u.cursor.left, t = u.cursor.top;
              if (l == null || l < 0) { tip.style.display = 'none'; return; }
              var n = nearest(u, l, t);
              tip.style.display = 'block';
              tip.style.left = (u.over.offsetLeft + l + 12) + 'px';
              tip.style.top = (u.over.offsetTop + t + 12) + 'px';
              tip.textContent = n ? 't ' + fmtS(n.t) + ' s, ' + (n.key === 'service' ? 'service ' : 'latency ') + fmtMs(n.v) + ' ms (' + n.key + ')'
                                  : 't ' + fmtS(u.posToVal(l, 'x')) + ' s, ' + fmtMs(u.posToVal(t, 'y')) + ' ms';
            }]
          }
        }
      };
    });
    joinGroup(p2, 'lat-y');
    groupButton(fig2, 'linear ms', 'lat-y', false);
  }

  function drawDropped(u, dropped, col_s) {
    if (!dropped || !dropped.n_total) return;
    var s = u.series[u.series.length - 1];
    if (!s.show) return;
    var ctx = u.ctx, max = Math.max.apply(null, dropped.n);
    ctx.save();
    ctx.fillStyle = CLASS.dropped;
    for (var i = 0; i < dropped.t.length; i++) {
      var t = dropped.t[i];
      if (t + col_s < u.scales.x.min || t > u.scales.x.max) continue;
      var x0 = u.valToPos(t, 'x', true), x1 = u.valToPos(t + col_s, 'x', true);
      var h = (4 + 10 * dropped.n[i] / max) * uPlot.pxRatio;
      ctx.fillRect(x0, u.bbox.top + u.bbox.height - h, Math.max(uPlot.pxRatio, x1 - x0), h);
    }
    ctx.restore();
  }

  /* ---- 4. heatmap ------------------------------------------------------------------------------ */

  var VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];

  function heatColor(f) {
    var x = Math.max(0, Math.min(1, f)) * (VIRIDIS.length - 1), i = Math.min(VIRIDIS.length - 2, Math.floor(x)), k = x - i;
    var a = VIRIDIS[i], b = VIRIDIS[i + 1];
    return 'rgb(' + Math.round(a[0] + (b[0] - a[0]) * k) + ',' + Math.round(a[1] + (b[1] - a[1]) * k) + ',' + Math.round(a[2] + (b[2] - a[2]) * k) + ')';
  }

  function heatmap(row, run, ri) {
    var hm = run.heatmap;
    var title = run.name + ': heatmap — requests per ' + (hm ? fmtS(hm.interval_s) : '1') + ' s (at T0, warm-up shaded) and doubling latency bucket (' + run.interval + '); colour = count, log scale';
    if (!hm) {
      omitted(row, 'chart-heat-' + ri, title, run.have.json && !run.have.requests && !run.have.hlog
        ? 'the run\'s JSON has no latency distribution per second: give its per-request log (--out) or --hlog too'
        : 'no request carries a latency');
      return;
    }
    var fig = figure(row, 'chart-heat-' + ri, title);
    var lo = hm.lo_ms.map(function (v, i) { return v > 0 ? v : hm.lo_ms[1] / 2; });
    var xs = hm.t.concat([hm.t[hm.t.length - 1] + hm.interval_s]);
    /* the runs' heatmaps share time, buckets and colour: the same colour is the same count */
    hm.counts.forEach(function (c) { extend('heat-c', c); });
    extend('heat-y', [lo[0], lo[lo.length - 1]]);
    extend('time-x', [0, xs[0], xs[xs.length - 1]]);
    var max = 1, maxText;
    var tip = tooltip(fig);
    var legend = el('div', 'heatlegend');
    legend.appendChild(el('span', null, '1'));
    var bar = el('span', 'bar');
    bar.style.background = 'linear-gradient(to right,' + [0, 0.25, 0.5, 0.75, 1].map(heatColor).join(',') + ')';
    legend.appendChild(bar);
    legend.appendChild(maxText = el('span', null, ''));
    fig.appendChild(legend);
    function cells(u) {
      var fills = new Map();
      for (var i = 0; i < hm.counts.length; i++) {
        var x0 = u.valToPos(hm.t[i], 'x', true), x1 = u.valToPos(hm.t[i] + hm.interval_s, 'x', true);
        for (var b = 0; b < hm.counts[i].length; b++) {
          var n = hm.counts[i][b];
          if (!n) continue;
          var y0 = u.valToPos(lo[b], 'y', true), y1 = u.valToPos(lo[b + 1], 'y', true);
          var c = heatColor(max > 1 ? Math.log(n) / Math.log(max) : 1);
          var p = fills.get(c);
          if (!p) fills.set(c, p = new Path2D());
          p.rect(x0, y1, Math.max(1, x1 - x0), Math.max(1, y0 - y1));
        }
      }
      return {fill: fills, stroke: null};
    }
    mount(fig, function (w) {
      var ys = xs.map(function (x, i) { return i === 0 ? lo[0] : lo[lo.length - 1]; });
      max = Math.max(1, group('heat-c').max);
      maxText.textContent = fmtCount(max) + ' requests' + (runs.length > 1 ? ' (one scale for every run)' : '');
      return {
        data: [xs, ys],
        opts: {
          width: w, height: 320,
          scales: {x: {time: false, range: xRange('time-x', [xs[0], xs[xs.length - 1]])},
                   y: {distr: 3, log: 2, range: function () { var g = group('heat-y'); return [g.min, g.max]; }}},
          legend: {show: false},
          series: [{}, {label: 'requests', stroke: 'transparent', fill: 'transparent', paths: cells, points: {show: false}}],
          axes: [timeAxis(), {label: 'latency bucket (ms, log)', size: 70, values: axisValues}],
          hooks: {
            draw: [warmupOverlay(run)],
            setCursor: [function (u) {
              var l = u.cursor.left, t = u.cursor.top;
              if (l == null || l < 0) { tip.style.display = 'none'; return; }
              var x = u.posToVal(l, 'x'), y = u.posToVal(t, 'y');
              var i = Math.floor((x - hm.t[0]) / hm.interval_s), b = -1;
              for (var k = 0; k < lo.length - 1; k++) if (y >= lo[k] && y < lo[k + 1]) b = k;
              if (i < 0 || i >= hm.counts.length || b < 0) { tip.style.display = 'none'; return; }
              tip.style.display = 'block';
              tip.style.left = (u.over.offsetLeft + l + 12) + 'px';
              tip.style.top = (u.over.offsetTop + t + 12) + 'px';
              tip.textContent = fmtS(hm.t[i]) + '..' + fmtS(hm.t[i] + hm.interval_s) + ' s, ' +
                (b === 0 && hm.lo_ms[0] === 0 ? '0' : fmtMs(lo[b])) + '..' + fmtMs(lo[b + 1]) + ' ms: ' + fmtCount(hm.counts[i][b]) + ' requests';
            }]
          }
        }
      };
    });
  }

  function warmupOverlay(run) { /* over the cells: the heatmap has no empty background to shade */
    return function (u) {
      if (!(run.warmup_s > 0)) return;
      var x0 = u.valToPos(u.scales.x.min, 'x', true), x1 = u.valToPos(Math.min(run.warmup_s, u.scales.x.max), 'x', true);
      if (x1 <= x0) return;
      var ctx = u.ctx;
      ctx.save();
      ctx.fillStyle = 'rgba(255,255,255,0.45)';
      ctx.fillRect(x0, u.bbox.top, x1 - x0, u.bbox.height);
      ctx.fillStyle = '#000';
      ctx.font = ctxFont(u, 11);
      ctx.fillText('warm-up', x0 + 4 * uPlot.pxRatio, u.bbox.top + 12 * uPlot.pxRatio);
      ctx.restore();
    };
  }

  /* ---- 5. rates, outcomes, lag ------------------------------------------------------------------ */

  function perSecond(arr, len) { return arr.map(function (n) { return n == null ? null : n / len; }); }

  /* A stepped series needs the end of its last interval: one more x, the last values repeated. */
  function closeSteps(d, iv) {
    var xs = d[0];
    if (!xs.length) return d;
    return [xs.concat([xs[xs.length - 1] + iv])].concat(d.slice(1).map(function (y) { return y.concat([y[y.length - 1]]); }));
  }

  function rates(row, run, ri) {
    var tl = run.timeline, jt = run.jtimeline;
    var iv = tl ? tl.interval_s : 1;
    var title = run.name + ': rates per second over ' + fmtS(iv) + ' s intervals — planned (at T0), sent (T1), completed (T5), goodput (ok at T5), failures by class (at T5), dropped (at T0)';
    var lines = [], xs;
    if (tl && tl.planned) {
      xs = tl.t;
      lines.push({label: 'planned', y: perSecond(tl.planned, iv), c: '#7f7f7f', dash: [5, 4]});
      lines.push({label: 'sent', y: perSecond(tl.sent, iv), c: PALETTE[1]});
      lines.push({label: 'completed', y: perSecond(tl.done, iv), c: PALETTE[0]});
      lines.push({label: 'goodput (ok)', y: perSecond(tl.ok, iv), c: PALETTE[2]});
      Object.keys(tl.fail).forEach(function (k) { lines.push({label: k, y: perSecond(tl.fail[k], iv), c: CLASS[k] || PALETTE[4]}); });
      if (tl.dropped.some(function (n) { return n > 0; })) lines.push({label: 'dropped', y: perSecond(tl.dropped, iv), c: CLASS.dropped, dash: [2, 2]});
    } else if (jt) {
      title = run.name + ': rates per second from the run\'s JSON timeline (knee run\'s per-second counts, warm-up included)';
      xs = jt.t;
      lines.push({label: 'planned', y: jt.planned.map(function (n, i) { return n / jt.len[i]; }), c: '#7f7f7f', dash: [5, 4]});
      lines.push({label: 'sent', y: jt.sent.map(function (n, i) { return n / jt.len[i]; }), c: PALETTE[1]});
      lines.push({label: 'completed', y: jt.completed.map(function (n, i) { return n / jt.len[i]; }), c: PALETTE[0]});
      lines.push({label: 'goodput (ok)', y: jt.ok.map(function (n, i) { return n / jt.len[i]; }), c: PALETTE[2]});
      lines.push({label: 'errors', y: jt.errors.map(function (n, i) { return n / jt.len[i]; }), c: CLASS.http_error});
      lines.push({label: 'dropped', y: jt.dropped.map(function (n, i) { return n / jt.len[i]; }), c: CLASS.dropped, dash: [2, 2]});
    } else if (tl) {
      title = run.name + ': completions per second over ' + fmtS(iv) + ' s intervals (from the hlog)';
      xs = tl.t;
      lines.push({label: 'completed (recorded latencies)', y: perSecond(tl.done, iv), c: PALETTE[0]});
    }
    if (!xs) {
      omitted(row, 'chart-rates-' + ri, title, 'no input has a timeline');
    } else {
      var fig = figure(row, 'chart-rates-' + ri, title);
      if (tl && !tl.planned) fig.appendChild(el('p', 'note', 'An hlog records the latencies of completed requests only: the plan, sends, failures and drops are in the run\'s JSON or per-request log.'));
      /* rates from zero, on the same axes for every run: 1% of noise looks like 1% */
      var data = closeSteps([xs].concat(lines.map(function (l) { return l.y; })), jt && !tl ? 1 : iv);
      var ownX = extentOf(data[0]);
      extend('time-x', [0].concat(ownX));
      lines.forEach(function (l) { extend('rates-y', l.y); });
      mount(fig, function (w) {
        return {
          data: data,
          opts: {
            width: w, height: 300, scales: {x: {time: false, range: xRange('time-x', ownX)}, y: {range: zeroRange('rates-y', 1.1)}},
            series: [{label: 'interval start (s)', value: function (u, v) { return fmtS(v); }}].concat(lines.map(function (l) {
              return {label: l.label, stroke: l.c, width: 1.5, dash: l.dash, paths: uPlot.paths.stepped({align: 1}), points: {show: false},
                value: function (u, v) { return v == null ? '-' : v.toFixed(1) + '/s'; }};
            })),
            axes: [timeAxis(), {label: 'per second', size: 70}],
            cursor: {sync: {key: 'run-' + ri}},
            hooks: {drawClear: [warmupHook(run)]}
          }
        };
      });
    }
    statusClasses(row, run, ri);
    lag(row, run, ri);
  }

  var STATUS_COLOR = {none: '#7f7f7f', '1xx': '#17becf', '2xx': '#2ca02c', '3xx': '#1f77b4', '4xx': '#ff7f0e', '5xx': '#d62728', other: '#9467bd'};
  var STATUS_LABEL = {none: 'no status (transport, timeout, cancelled)'};

  /* Responses per second by status class (at T5), when one was not 2xx/3xx; a run known only
   * by its JSON has the counts (the table under the summary) but no status over time. */
  function statusClasses(row, run, ri) {
    var tl = run.timeline, st = tl && tl.status;
    var failed = function (k) { return k !== '2xx' && k !== '3xx'; };
    var title = run.name + ': responses per second by HTTP status class over ' + (tl ? fmtS(tl.interval_s) : '1') + ' s intervals (at T5; no status: transport, timeout, cancelled)';
    if (!st) {
      var codes = Object.keys(run.status_codes || {});
      if (codes.some(function (c) { return c === 'other' || +c < 200 || +c > 399; }))
        omitted(row, 'chart-status-' + ri, title, 'only a per-request log has the status of each response over time; the run\'s JSON has the counts (the table under the summary)');
      return;
    }
    var keys = Object.keys(st);
    if (!keys.some(failed)) return; /* 2xx/3xx only: the rates chart says it all */
    var iv = tl.interval_s;
    var fig = figure(row, 'chart-status-' + ri, title);
    var data = closeSteps([tl.t].concat(keys.map(function (k) { return perSecond(st[k], iv); })), iv);
    var ownX = extentOf(data[0]);
    extend('time-x', [0].concat(ownX));
    data.slice(1).forEach(function (y) { extend('status-y', y); });
    mount(fig, function (w) {
      return {
        data: data,
        opts: {
          width: w, height: 260, scales: {x: {time: false, range: xRange('time-x', ownX)}, y: {range: zeroRange('status-y', 1.1)}},
          series: [{label: 'interval start (s)', value: function (u, v) { return fmtS(v); }}].concat(keys.map(function (k) {
            return {label: STATUS_LABEL[k] || k, stroke: STATUS_COLOR[k] || PALETTE[4], width: 1.5, paths: uPlot.paths.stepped({align: 1}), points: {show: false},
              value: function (u, v) { return v == null ? '-' : v.toFixed(1) + '/s'; }};
          })),
          axes: [timeAxis(), {label: 'responses per second', size: 70}],
          cursor: {sync: {key: 'run-' + ri}},
          hooks: {drawClear: [warmupHook(run)]}
        }
      };
    });
  }

  function lag(row, run, ri) {
    var tl = run.timeline;
    /* the verdict's threshold: the lag limit, plus the --timer-slack the run allowed (the verdict judges the lag beyond it) */
    var slack = run.timer_slack_ms || 0;
    var limit = slack > 0 ? run.lag_threshold_ms : run.lag_limit_ms;
    var source = run.lag_limit_known ? '--lag-limit' : 'knee run\'s default --lag-limit';
    var title = run.name + ': the generator\'s lag T1 - T0, p99 per ' + (tl ? fmtS(tl.interval_s) : '1') + ' s (by T0; HdrHistogram, 2 digits), ' +
      'with the generator-limited threshold at ' + fmtMs(limit) + ' ms' +
      (slack > 0 ? ' (' + source + ' ' + fmtMs(run.lag_limit_ms) + ' ms + --timer-slack ' + fmtMs(slack) + ' ms: the verdict judges the lag beyond the slack)'
                 : ' (' + source + ')') +
      '; requests in flight at the end of each interval (right axis)';
    if (!tl || !tl.lag_p99_ms) {
      omitted(row, 'chart-lag-' + ri, title, run.have.hlog ? 'an hlog has no send times, so no lag and no in-flight count'
        : 'only a per-request log has the send time of each request (the JSON has the lag of the whole run: see the summary)');
      return;
    }
    if (run.mode === 'closed') {
      omitted(row, 'chart-lag-' + ri, title, 'a closed loop has no plan: a request is sent when its connection is free, so the lag is zero by definition');
      return;
    }
    var fig = figure(row, 'chart-lag-' + ri, title);
    if (run.generator_limited === true) fig.appendChild(el('p', 'note warn', 'knee run said: GENERATOR-LIMITED (see the summary\'s warnings).'));
    var data = closeSteps([tl.t, tl.lag_p99_ms, tl.in_flight], tl.interval_s);
    var ownX = extentOf(data[0]);
    extend('time-x', [0].concat(ownX));
    extend('lag-y', tl.lag_p99_ms.concat([limit]));
    extend('lag-n', tl.in_flight);
    mount(fig, function (w) {
      return {
        data: data,
        opts: {
          width: w, height: 260,
          scales: {x: {time: false, range: xRange('time-x', ownX)}, lag: {range: zeroRange('lag-y', 1.15, limit)}, n: {range: zeroRange('lag-n', 1.1)}},
          series: [{label: 'interval start (s)', value: function (u, v) { return fmtS(v); }},
                   {label: 'lag p99 (ms)', scale: 'lag', stroke: PALETTE[3], width: 1.8, paths: uPlot.paths.stepped({align: 1}), value: function (u, v) { return fmtMs(v) + ' ms'; }},
                   {label: 'in flight', scale: 'n', stroke: PALETTE[4], width: 1.2, dash: [4, 3], paths: uPlot.paths.stepped({align: 1}), value: function (u, v) { return fmtCount(v); }}],
          axes: [timeAxis(), {scale: 'lag', label: 'lag p99 (ms)', size: 70, values: axisValues},
                 {scale: 'n', side: 1, label: 'in flight', size: 60, grid: {show: false}}],
          cursor: {sync: {key: 'run-' + ri}},
          hooks: {
            drawClear: [warmupHook(run)],
            draw: [function (u) {
              var y = Math.round(u.valToPos(limit, 'lag', true)), ctx = u.ctx;
              ctx.save();
              ctx.strokeStyle = '#d62728';
              ctx.lineWidth = uPlot.pxRatio;
              ctx.setLineDash([6 * uPlot.pxRatio, 4 * uPlot.pxRatio]);
              ctx.beginPath();
              ctx.moveTo(u.bbox.left, y);
              ctx.lineTo(u.bbox.left + u.bbox.width, y);
              ctx.stroke();
              ctx.fillStyle = '#d62728';
              ctx.font = ctxFont(u, 11);
              ctx.fillText('generator-limited above ' + fmtMs(limit) + ' ms' + (slack > 0 ? ' (limit + ' + fmtMs(slack) + ' ms --timer-slack)' : ''), u.bbox.left + 6 * uPlot.pxRatio, y - 4 * uPlot.pxRatio);
              ctx.restore();
            }]
          }
        }
      };
    });
  }


  /* ---- documents: shared helpers -------------------------------------------------------------- */

  var docs = data.documents || [];

  function num(v) { return typeof v === 'number' && isFinite(v) ? v : null; }
  function arr(v) { return Array.isArray(v) ? v : []; }
  function obj(v) { return v && typeof v === 'object' && !Array.isArray(v) ? v : {}; }
  function fix3(v) { v = num(v); return v == null ? '-' : v.toFixed(3); }
  function signed3(v) { v = num(v); return v == null ? '-' : (v >= 0 ? '+' : '') + v.toFixed(3); }
  function pctText(v, d) { v = num(v); return v == null ? '-' : (v >= 0 ? '+' : '') + (100 * v).toFixed(d == null ? 1 : d) + '%'; }
  function rateText(v) { v = num(v); return v == null ? '-' : v.toLocaleString('en-US', {maximumFractionDigits: 1}) + '/s'; }

  function docRow(host, title, intro) {
    var s = el('div', 'docrow');
    if (title) s.appendChild(el('h3', null, title));
    if (intro) s.appendChild(el('p', 'intro', intro));
    var row = el('div', 'row');
    s.appendChild(row);
    host.appendChild(s);
    return row;
  }

  /* A table: head (strings) and rows (arrays of strings or {text, cls, title, attrs}). */
  function table(host, id, caption, head, rows) {
    var t = el('table', 'data');
    t.id = id;
    if (caption) t.appendChild(el('caption', null, caption));
    var tr = el('tr');
    head.forEach(function (h) {
      var th = el('th', null, h && typeof h === 'object' ? h.text : h);
      if (h && h.title) th.title = h.title;
      tr.appendChild(th);
    });
    var thead = el('thead');
    thead.appendChild(tr);
    t.appendChild(thead);
    var tb = el('tbody');
    rows.forEach(function (r) {
      var row = el('tr');
      if (r.attrs) Object.keys(r.attrs).forEach(function (k) { row.setAttribute(k, r.attrs[k]); });
      (r.cells || r).forEach(function (c, i) {
        var cell = el(i === 0 ? 'th' : 'td', c && c.cls ? c.cls : null, c && typeof c === 'object' ? c.text : c);
        if (c && c.title) cell.title = c.title;
        if (c && c.key) cell.setAttribute('data-key', c.key);
        row.appendChild(cell);
      });
      tb.appendChild(row);
    });
    t.appendChild(tb);
    host.appendChild(t);
    return t;
  }

  function hline(u, v, scale, color, label, dash) {
    if (v == null || v < u.scales[scale].min || v > u.scales[scale].max) return;
    var y = Math.round(u.valToPos(v, scale, true)), ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = color;
    ctx.lineWidth = uPlot.pxRatio;
    ctx.setLineDash((dash || [6, 4]).map(function (x) { return x * uPlot.pxRatio; }));
    ctx.beginPath();
    ctx.moveTo(u.bbox.left, y);
    ctx.lineTo(u.bbox.left + u.bbox.width, y);
    ctx.stroke();
    if (label) {
      ctx.fillStyle = color;
      ctx.font = ctxFont(u, 11);
      ctx.textAlign = 'left';
      ctx.textBaseline = 'alphabetic';
      ctx.fillText(label, u.bbox.left + 6 * uPlot.pxRatio, y - 4 * uPlot.pxRatio);
    }
    ctx.restore();
  }

  function vline(u, v, color, label, dash) {
    if (v == null || v < u.scales.x.min || v > u.scales.x.max) return;
    var x = Math.round(u.valToPos(v, 'x', true)), ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.5 * uPlot.pxRatio;
    ctx.setLineDash((dash || [6, 4]).map(function (d) { return d * uPlot.pxRatio; }));
    ctx.beginPath();
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + u.bbox.height);
    ctx.stroke();
    if (label) {
      ctx.fillStyle = color;
      ctx.font = ctxFont(u, 11);
      ctx.textAlign = 'left';
      ctx.textBaseline = 'alphabetic';
      ctx.fillText(label, x + 4 * uPlot.pxRatio, u.bbox.top + 12 * uPlot.pxRatio);
    }
    ctx.restore();
  }

  function pointsOnly(color, size) {
    return {stroke: color, fill: color, width: 0, paths: function () { return null; }, points: {show: true, size: size || 6, fill: color, stroke: color}};
  }

  /* ---- 7. knee compare: the two distributions overlaid, the differences with their intervals ---- */

  var SIDE = {before: '#1f77b4', after: '#d62728'};

  /* Each metric's interval as a whisker coloured by its verdict, the spread of the
   * repetitions as a grey band, the difference written beside the point. An end beyond the
   * y scale is cut at the edge: an arrowhead there, and a label (.clip-mark, over the plot)
   * with the end's value. */
  function drawDifferences(u, keys, ms) {
    hline(u, 0, 'y', '#666', null, [3, 3]);
    Array.prototype.slice.call(u.over.querySelectorAll('.clip-mark')).forEach(function (e) { e.remove(); });
    var ctx = u.ctx, top = u.scales.y.max, bottom = u.scales.y.min;
    ctx.save();
    ctx.textAlign = 'left';
    ctx.textBaseline = 'alphabetic';
    keys.forEach(function (k, i) {
      var m = ms[k], x = u.valToPos(i, 'x', true), half = 10 * uPlot.pxRatio;
      var spread = Math.max(num(m.spread_before) || 0, num(m.spread_after) || 0), bv = num(m.before);
      if (m.unit !== 'fraction' && bv) {
        var sr = 100 * spread / bv, c = 100 * m.relative;
        ctx.fillStyle = 'rgba(120,120,120,0.18)';
        var y0 = u.valToPos(Math.min(top, c + sr / 2), 'y', true), y1 = u.valToPos(Math.max(bottom, c - sr / 2), 'y', true);
        if (y1 > y0) ctx.fillRect(x - 2.2 * half, y0, 4.4 * half, y1 - y0);
      }
      if (num(m.ci_low_relative) != null) {
        var lo = 100 * m.ci_low_relative, hi = 100 * m.ci_high_relative;
        var ya = u.valToPos(Math.max(bottom, lo), 'y', true), yb = u.valToPos(Math.min(top, hi), 'y', true);
        var col = /slower/.test(m.verdict) ? '#d62728' : /faster/.test(m.verdict) ? '#2ca02c' : '#1f77b4';
        ctx.strokeStyle = col;
        ctx.fillStyle = col;
        ctx.lineWidth = 2 * uPlot.pxRatio;
        ctx.beginPath();
        ctx.moveTo(x, ya); ctx.lineTo(x, yb);
        ctx.stroke();
        [[lo, ya, lo < bottom, 1, 'low'], [hi, yb, hi > top, -1, 'high']].forEach(function (e) {
          if (!e[2]) { /* a cap */
            ctx.beginPath();
            ctx.moveTo(x - half, e[1]); ctx.lineTo(x + half, e[1]);
            ctx.stroke();
            return;
          }
          var a = 9 * uPlot.pxRatio; /* an arrowhead pointing out of the chart */
          ctx.beginPath();
          ctx.moveTo(x, e[1]);
          ctx.lineTo(x - a * 0.7, e[1] + e[3] * a);
          ctx.lineTo(x + a * 0.7, e[1] + e[3] * a);
          ctx.closePath();
          ctx.fill();
          var mark = el('span', 'clip-mark', (e[4] === 'high' ? '\u2191 ' : '\u2193 ') + pctText(e[0] / 100) + ' (clipped)');
          mark.setAttribute('data-metric', k);
          mark.setAttribute('data-end', e[4]);
          mark.style.color = col;
          u.over.appendChild(mark);
          mark.style.left = Math.round(u.valToPos(i, 'x') + 8) + 'px';
          mark.style.top = Math.round(e[4] === 'high' ? 2 : u.over.clientHeight - mark.offsetHeight - 2) + 'px';
        });
      }
      ctx.fillStyle = '#111';
      ctx.font = ctxFont(u, 11);
      var label = (m.unit === 'fraction' ? pctText(m.difference, 2) : signed3(m.difference) + ' ms') + ' ' + pctText(m.relative);
      ctx.fillText(label, x + 1.5 * half, u.valToPos(100 * m.relative, 'y', true) - 4 * uPlot.pxRatio);
    });
    ctx.restore();
  }

  function compareDoc(d, di, host) {
    var doc = d.doc, all = obj(doc.all), reps = obj(doc.repetitions), method = obj(doc.method);
    var conf = num(method.confidence), widen = num(method.widening);
    var ivl = (conf != null ? Math.round(conf * 100) + '% ' : '') + 'intervals from a hierarchical bootstrap (repetitions, then requests' +
      (num(method.resamples) != null ? '; ' + fmtCount(method.resamples) + ' resamples' : '') + ')' + (widen != null && widen !== 1 ? ', widened x' + widen.toFixed(2) + ' for ' + reps.before + ' and ' + reps.after + ' repetitions' : '');
    var metricKeys = Object.keys(obj(doc.metrics));
    function metricRows(t) {
      var ms = obj(t.metrics);
      return Object.keys(ms).map(function (k) {
        var m = obj(ms[k]), frac = m.unit === 'fraction';
        var v = function (x) { return frac ? (num(x) == null ? '-' : (100 * x).toFixed(2) + '%') : fix3(x); };
        var dv = function (x) { return frac ? pctText(x, 2) : signed3(x); };
        return {attrs: {'data-metric': k}, cells: [
          {text: k + (frac ? ' (share under ' + fmtMs(num(doc.under_ms)) + ' ms)' : ' (ms)')},
          {text: v(m.before), key: 'before'}, {text: v(m.after), key: 'after'}, {text: dv(m.difference), key: 'difference'},
          {text: num(m.ci_low) == null ? '-' : '[' + dv(m.ci_low) + ', ' + dv(m.ci_high) + ']', key: 'interval'},
          {text: pctText(m.relative), key: 'relative'},
          {text: frac ? '-' : fix3(Math.max(num(m.spread_before) || 0, num(m.spread_after) || 0)), key: 'spread'},
          {text: m.verdict || '-', cls: /slower|worse/.test(m.verdict || '') ? 'bad' : /faster|better/.test(m.verdict || '') ? 'good' : null, key: 'verdict'}]};
      });
    }
    var head = ['metric', 'before', 'after', 'difference', 'interval', 'relative', 'spread within', 'verdict'];
    var trow = docRow(host, 'The differences, after - before', 'Each side pooled over its repetitions (' + reps.before + ' before, ' + reps.after + ' after); ' + ivl +
      '; spread within = the widest max - min of one side\'s repetitions. A verdict needs 3 repetitions a side, an interval without 0 and a difference larger than the spread.');
    table(trow, 'cmp-table-' + di, 'all targets (' + fmtCount(all.requests_before) + ' requests before, ' + fmtCount(all.requests_after) + ' after): ' + (all.verdict || ''), head, metricRows(all));
    arr(doc.targets).forEach(function (t, ti) {
      if (arr(doc.targets).length > 1) table(trow, 'cmp-table-' + di + '-' + ti, 'target ' + t.name + ': ' + (t.verdict || ''), head, metricRows(obj(t)));
    });

    var row = docRow(host, null, null);
    /* 7a. histogram overlay: share of requests per doubling bucket */
    var dist = obj(doc.distribution), sides = ['before', 'after'];
    var buckets = {};
    sides.forEach(function (s) { arr(dist[s]).forEach(function (b) { if (num(b.from_ms) != null) buckets[b.from_ms] = b.to_ms; }); });
    var los = Object.keys(buckets).map(Number).sort(function (a, b) { return a - b; });
    var htitle = d.name + ': latency of both sides (all targets, every repetition pooled), share of requests per doubling bucket';
    if (!los.length) {
      omitted(row, 'chart-cmp-hist-' + di, htitle, 'the document has no distribution');
    } else {
      var xs = los.slice();
      var lastTo = buckets[los[los.length - 1]];
      xs.push(num(lastTo) != null ? lastTo : los[los.length - 1] * 2);
      var shares = sides.map(function (s) {
        var total = arr(dist[s]).reduce(function (a, b) { return a + (num(b.count) || 0); }, 0);
        var y = xs.map(function () { return 0; });
        arr(dist[s]).forEach(function (b) { var i = los.indexOf(b.from_ms); if (i >= 0) y[i] = total ? b.count / total : 0; });
        y[y.length - 1] = y[y.length - 2];
        return y;
      });
      var fig = figure(row, 'chart-cmp-hist-' + di, htitle, false);
      mount(fig, function (w) {
        return {
          data: [xs].concat(shares),
          opts: {
            width: w, height: 320,
            scales: {x: {time: false, distr: 3, log: 2}, y: {range: function (u, mn, mx) { return [0, mx * 1.08]; }}},
            series: [{label: 'bucket (ms)', value: function (u, v, si, i) { return i == null || i >= xs.length - 1 ? '-' : fmtMs(xs[i]) + ' .. ' + fmtMs(xs[i + 1]); }}]
              .concat(sides.map(function (s) {
                return {label: s, stroke: SIDE[s], fill: SIDE[s] + '30', width: 1.6, paths: uPlot.paths.stepped({align: 1}), points: {show: false},
                  value: function (u, v) { return v == null ? '-' : (100 * v).toFixed(1) + '%'; }};
              })),
            axes: [{label: 'latency (ms), log scale: doubling buckets', values: axisValues},
                   {label: 'share of requests', size: 60, values: function (u, vs) { return vs.map(function (v) { return Math.round(v * 100) + '%'; }); }}]
          }
        };
      });
    }
    /* 7b. spectrum overlay with the compared percentiles marked */
    var sp = obj(doc.spectrum);
    var stitle = d.name + ': percentile spectrum of both sides (nearest rank over the pooled requests; x = 1/(1 - p), log), the compared percentiles marked';
    if (!sides.every(function (s) { return arr(obj(sp[s]).p).length; })) {
      omitted(row, 'chart-cmp-spectrum-' + di, stitle, 'the document has no spectrum (written by a knee before it had one)');
    } else {
      var tables = sides.map(function (s) {
        var o = obj(sp[s]);
        return [arr(o.p).map(function (p) { return 1 / (1 - p); }), arr(o.v)];
      });
      var joined = uPlot.join(tables);
      var marks = [];
      [['p50', 0.5], ['p90', 0.9], ['p99', 0.99], ['p99.9', 0.999]].forEach(function (k) {
        var m = obj(obj(doc.metrics)[k[0]]);
        if (num(m.before) != null) marks.push({name: k[0], x: 1 / (1 - k[1]), before: m.before, after: m.after});
      });
      var fig2 = figure(row, 'chart-cmp-spectrum-' + di, stitle, false);
      var logY = true;
      mount(fig2, function (w) {
        return {
          data: joined,
          opts: {
            width: w, height: 320,
            scales: {x: {time: false, distr: 3, log: 10}, y: logY ? {distr: 3, log: 10} : {range: function (u, mn, mx) { return [0, mx * 1.05]; }}},
            series: [{label: 'percentile', value: function (u, v) { return v == null ? '-' : pct(v); }}].concat(sides.map(function (s) {
              return {label: s, stroke: SIDE[s], width: 1.8, spanGaps: true, points: {show: false}, value: function (u, v) { return v == null ? '-' : fmtMs(v) + ' ms'; }};
            })),
            axes: [{label: 'percentile (1/(1-p), log scale)', values: function (u, v) { return v.map(pct); },
                    splits: function (u, ai, mn, mx) { var out = []; for (var x = 1; x <= mx * 1.0001; x *= 10) if (x >= mn * 0.9999) out.push(x); return out; }},
                   {label: 'latency (ms)' + (logY ? ', log' : ''), size: 70, values: axisValues}],
            hooks: {draw: [function (u) {
              var ctx = u.ctx;
              ctx.save();
              ctx.font = ctxFont(u, 10);
              ctx.textAlign = 'left';
              ctx.textBaseline = 'alphabetic';
              marks.forEach(function (m) {
                if (m.x < u.scales.x.min || m.x > u.scales.x.max) return;
                var x = u.valToPos(m.x, 'x', true);
                sides.forEach(function (s) {
                  var v = num(m[s]);
                  if (v == null || v <= 0 || v < u.scales.y.min || v > u.scales.y.max) return;
                  var y = u.valToPos(v, 'y', true);
                  ctx.fillStyle = SIDE[s];
                  ctx.beginPath();
                  ctx.arc(x, y, 3.5 * uPlot.pxRatio, 0, 2 * Math.PI);
                  ctx.fill();
                });
                ctx.fillStyle = '#333';
                ctx.fillText(m.name, x + 4 * uPlot.pxRatio, u.bbox.top + u.bbox.height - 4 * uPlot.pxRatio);
              });
              ctx.restore();
            }]}
          }
        };
      });
      button(fig2, 'linear ms', function () { logY = !logY; this.classList.toggle('on', !logY); plotsOf(fig2).draw(); });
    }
    /* 7c. the differences with their intervals, relative to before */
    var drow = docRow(host, null, null);
    var ms = obj(doc.metrics);
    var keys = metricKeys.filter(function (k) { return num(obj(ms[k]).relative) != null; });
    var dtitle = d.name + ': difference after - before of each metric, relative to before, with its ' + ivl + '; grey: the spread of the repetitions (max - min of a side, relative)';
    if (!keys.length) {
      omitted(drow, 'chart-cmp-diff-' + di, dtitle, 'no metric has a difference');
      return;
    }
    /* The scale follows the findings, not the widest interval: every metric's difference is
     * inside it, and an interval end beyond three times the largest difference (at least 10%) is
     * cut at the edge and marked, its value written (the table above has it whole). */
    var ys = keys.map(function (k) { return 100 * ms[k].relative; });
    var reach = Math.max(10, 3 * Math.max.apply(null, ys.map(Math.abs)));
    var ends = [];
    keys.forEach(function (k) {
      [num(ms[k].ci_low_relative), num(ms[k].ci_high_relative)].forEach(function (v) { if (v != null) ends.push(100 * v); });
    });
    var ymin = Math.min.apply(null, ys.concat([0], ends.filter(function (v) { return v >= -reach; })));
    var ymax = Math.max.apply(null, ys.concat([0], ends.filter(function (v) { return v <= reach; })));
    var pad = (ymax - ymin) * 0.08 || 1;
    var clipsSome = ends.some(function (v) { return v < ymin - pad || v > ymax + pad; });
    var fig3 = figure(drow, 'chart-cmp-diff-' + di, dtitle, true);
    if (clipsSome) fig3.appendChild(el('p', 'note', 'An interval reaching beyond ' + fmtAxis(reach) + '% (three times the largest difference) is cut at the edge of the chart, marked with an arrow and its end; the table above has it whole.'));
    var tip = tooltip(fig3);
    var xs3 = keys.map(function (k, i) { return i; });
    mount(fig3, function (w) {
      return {
        data: [xs3, ys],
        opts: {
          width: w, height: 300,
          scales: {x: {time: false, range: [-0.6, keys.length - 0.4]}, y: {range: [ymin - pad, ymax + pad]}},
          legend: {show: false},
          series: [{}, pointsOnly('#333', 9)],
          axes: [{label: 'metric', splits: function () { return xs3; }, values: function (u, vs) { return vs.map(function (v) { return keys[v] || ''; }); }, grid: {show: false}},
                 {label: 'after / before - 1 (%)', size: 70, values: function (u, vs) { return vs.map(function (v) { return (v > 0 ? '+' : '') + fmtAxis(v) + '%'; }); }}],
          hooks: {
            draw: [function (u) { drawDifferences(u, keys, ms); }],
            setCursor: [function (u) {
              var l = u.cursor.left;
              if (l == null || l < 0) { tip.style.display = 'none'; return; }
              var i = Math.round(u.posToVal(l, 'x'));
              var m = ms[keys[i]];
              if (!m) { tip.style.display = 'none'; return; }
              tip.style.display = 'block';
              tip.style.left = (u.over.offsetLeft + l + 12) + 'px';
              tip.style.top = (u.over.offsetTop + u.cursor.top + 12) + 'px';
              tip.textContent = keys[i] + ': ' + fix3(m.before) + ' -> ' + fix3(m.after) + ', ' + signed3(m.difference) + ' [' + signed3(m.ci_low) + ', ' + signed3(m.ci_high) + '], ' + (m.verdict || '');
            }]
          }
        }
      };
    });
  }

  /* ---- 6. knee capacity: the knee curve, the ladder x repetition grid, the probes --------------- */

  /* The cross-check in one line: the second method (the queue model when latency-bound, else the
   * closed loop), whether it agrees, and the closed loop's bound (a document before the queue
   * model has no method: the closed loop). */
  function crossText(x) {
    if (!x.ran) return 'not run';
    var agree = x.agree === true ? ', agrees' : x.agree === false ? ', DISAGREES' : '';
    if (!x.method) return 'closed loop ' + rateText(x.closed_loop) + agree;
    var second = x.method === 'queue' ? 'queue model ' + rateText(x.second) : 'closed loop ' + rateText(x.closed_loop);
    return (x.regime ? x.regime + ': ' : '') + second + agree + (num(x.bound) != null ? '; closed-loop bound ' + rateText(x.bound) + (x.above_bound ? ' (the ladder is ABOVE it)' : '') : '');
  }

  function capacityDoc(d, di, host) {
    var doc = d.doc, cfg = obj(doc.config), ladder = arr(doc.ladder), knee = obj(d.knee);
    var rates = ladder.map(function (g) { return num(g.rate); });
    var nreps = Math.max.apply(null, [0].concat(ladder.map(function (g) { return arr(g.reps).length; })));
    var repsInfo = arr(doc.repetitions);
    var cap = num(doc.capacity), bracket = arr(doc.bracket);
    /* the answer */
    var facts = docRow(host, 'The answer', 'A step is held when the generator delivered it (99% of the plan sent on schedule) and every SLO term passed; a rate is held by a strict majority of the valid repetitions; the capacity is the highest held rate with every lower rate held.');
    table(facts, 'cap-facts-' + di, null, ['', ''], [
      {attrs: {'data-key': 'capacity'}, cells: ['capacity', {text: cap == null ? 'none' : rateText(cap), key: 'capacity'}]},
      {attrs: {'data-key': 'verdict'}, cells: ['verdict', {text: doc.verdict || '-', cls: doc.verdict === 'valid' ? 'good' : 'bad', key: 'verdict'}]},
      {cells: ['ladder capacity', {text: num(doc.ladder_capacity) == null ? 'below the ladder' : rateText(doc.ladder_capacity), key: 'ladder_capacity'}]},
      {cells: ['between', {text: rateText(bracket[0]) + ' and ' + (num(bracket[1]) == null ? 'above the top' : rateText(bracket[1])), key: 'bracket'}]},
      {cells: ['SLO', {text: arr(doc.slo).join(', ') || '-', key: 'slo'}]},
      {cells: ['repetitions', {text: (num(doc.valid_reps) == null ? '-' : doc.valid_reps) + ' valid of ' + (num(doc.reps) == null ? nreps : doc.reps), key: 'reps'}]},
      {cells: ['cross-check', {text: crossText(obj(doc.cross_check)), key: 'cross_check'}]}
    ].concat(obj(doc.cross_check).regime_reason ? [{cells: ['regime', {text: obj(doc.cross_check).regime_reason, key: 'regime'}]}] : []));
    /* 6a. the knee curve: latency against the offered rate */
    var row = docRow(host, null, null);
    var pred = knee.prediction ? obj(knee.prediction) : null;
    /* the queueing predictions: M/M/1 and M/D/1 for one server, M/M/c for c (src/model has no M/D/c) */
    var servers = pred ? Math.max(1, num(pred.servers) || 1) : 1;
    var models = !pred ? [] : servers > 1 ? [['M/M/' + servers, obj(pred.mmc), [2, 3]]] : [['M/M/1', obj(pred.mm1), [2, 3]], ['M/D/1', obj(pred.md1), [8, 4]]];
    var title = d.name + ': the knee curve — latency p50 and p99 at each offered rate of the ladder (open loop, from the planned send; lines: the median of the valid repetitions, dots: each repetition' +
      (obj(doc.cross_check).ran ? '; squares: the closed-loop cross-check at its throughput' : '') + '), the SLO' +
      (pred ? ', and ' + models.map(function (m) { return m[0]; }).join(' and ') + ' with ' + (servers > 1 ? servers + ' servers and ' : '') + 'a service time of ' + fmtMs(pred.service_ms) + ' ms (dashed)' : '');
    if (!ladder.length) {
      omitted(row, 'chart-cap-knee-' + di, title, 'the ladder is empty');
    } else {
      var t1 = [rates, ladder.map(function (g) { return num(obj(g.median).p50); }), ladder.map(function (g) { return num(obj(g.median).p99); })];
      var series = [{label: 'offered rate (/s)', value: function (u, v) { return v == null ? '-' : rateText(v); }},
        {label: 'p50 (median of reps)', stroke: PALETTE[0], width: 2, spanGaps: true, value: function (u, v) { return v == null ? '-' : fmtMs(v) + ' ms'; }},
        {label: 'p99 (median of reps)', stroke: PALETTE[3], width: 2, spanGaps: true, value: function (u, v) { return v == null ? '-' : fmtMs(v) + ' ms'; }}];
      for (var r = 0; r < nreps; r++) {
        (function (r) {
          t1.push(ladder.map(function (g) { return num(obj(arr(g.reps)[r]).p50); }));
          t1.push(ladder.map(function (g) { return num(obj(arr(g.reps)[r]).p99); }));
          var valid = obj(repsInfo[r]).valid !== false;
          series.push(Object.assign(pointsOnly(PALETTE[0] + (valid ? 'aa' : '44'), 5), {label: 'rep ' + (r + 1) + ' p50' + (valid ? '' : ' (excluded)'), value: function (u, v) { return v == null ? '-' : fmtMs(v) + ' ms'; }}));
          series.push(Object.assign(pointsOnly(PALETTE[3] + (valid ? 'aa' : '44'), 5), {label: 'rep ' + (r + 1) + ' p99' + (valid ? '' : ' (excluded)'), value: function (u, v) { return v == null ? '-' : fmtMs(v) + ' ms'; }}));
        })(r);
      }
      var tablesK = [t1];
      var cross = obj(doc.cross_check);
      if (cross.ran && arr(cross.steps).length) {
        var cs = arr(cross.steps).filter(function (s) { return num(s.throughput) != null; }).sort(function (a, b) { return a.throughput - b.throughput; });
        tablesK.push([cs.map(function (s) { return s.throughput; }), cs.map(function (s) { return num(s.p99); })]);
        series.push(Object.assign(pointsOnly('#9467bd', 7), {label: 'closed loop p99 (cross-check)', points: {show: true, size: 7, fill: '#fff', stroke: '#9467bd', width: 2}, value: function (u, v) { return v == null ? '-' : fmtMs(v) + ' ms'; }}));
      }
      if (pred) {
        var tp = [arr(pred.rate)];
        models.forEach(function (m) {
          tp.push(arr(m[1].p50), arr(m[1].p99));
          [[' p50', PALETTE[0]], [' p99', PALETTE[3]]].forEach(function (q) {
            series.push({label: m[0] + q[0], stroke: q[1], width: 1.2, dash: m[2], spanGaps: true, points: {show: false}, value: function (u, v) { return v == null ? '-' : fmtMs(v) + ' ms'; }});
          });
        });
        tablesK.push(tp);
      }
      var joinedK = uPlot.join(tablesK);
      var measured = [];
      t1.slice(1).forEach(function (y) { y.forEach(function (v) { if (v != null && v > 0) measured.push(v); }); });
      var sloTerms = arr(knee.slo);
      sloTerms.forEach(function (t) { if (num(t.ms) > 0) measured.push(t.ms); });
      var ylo = Math.min.apply(null, measured.concat([1])) / 1.5, yhi = Math.max.apply(null, measured.concat([1])) * 1.5;
      var xhi = Math.max.apply(null, rates.concat(tablesK.length > 1 ? tablesK[1][0] : [])) * 1.08;
      var figK = figure(row, 'chart-cap-knee-' + di, title, true);
      var legendK = labelLegend(figK);
      mount(figK, function (w) {
        return {
          data: joinedK,
          opts: {
            width: w, height: 380,
            scales: {x: {time: false, range: [0, xhi]}, y: {distr: 3, log: 10, range: [ylo, yhi]}},
            series: series,
            axes: [{label: 'offered rate (requests per second)', values: axisValues}, {label: 'latency (ms, log)', size: 70, values: axisValues}],
            hooks: {draw: [function (u) {
              sloTerms.forEach(function (t) { hline(u, num(t.ms), 'y', '#d62728', 'SLO ' + t.expr); });
              var labels = [];
              if (cap != null) {
                vline(u, cap, '#2ca02c', null, [2, 0]);
                labels.push({v: cap, text: 'capacity ' + rateText(cap), color: '#2ca02c', key: 'capacity'});
              }
              if (pred) {
                vline(u, num(pred.saturation_rate), '#7f7f7f', null, [2, 4]);
                labels.push({v: num(pred.saturation_rate), text: 'saturation ' + (servers > 1 ? 'c/S' : '1/S') + ' = ' + rateText(pred.saturation_rate), color: '#555', key: 'saturation'});
              }
              placeLabels(u, legendK, labels, 'Not labelled on the chart, too close to the others: ');
            }]}
          }
        };
      });
      /* 6b. achieved against offered */
      var t2 = [rates, ladder.map(function (g) { return num(obj(g.median).achieved); })];
      var s2 = [{label: 'offered rate (/s)', value: function (u, v) { return v == null ? '-' : rateText(v); }},
        {label: 'achieved (median of reps)', stroke: PALETTE[2], width: 2, spanGaps: true, value: function (u, v) { return rateText(v); }}];
      for (var q = 0; q < nreps; q++) {
        (function (q) {
          t2.push(ladder.map(function (g) { return num(obj(arr(g.reps)[q]).achieved); }));
          s2.push(Object.assign(pointsOnly(PALETTE[2] + 'aa', 5), {label: 'rep ' + (q + 1), value: function (u, v) { return rateText(v); }}));
        })(q);
      }
      var top = Math.max.apply(null, rates.filter(function (x) { return x != null; }));
      var floor = num(cfg.delivered_floor) || 0.99;
      var joined2 = uPlot.join([t2, [[0, top * 1.08], [0, top * 1.08], [0, top * 1.08 * floor]]]);
      s2.push({label: 'offered (all delivered)', stroke: '#7f7f7f', width: 1, dash: [4, 4], points: {show: false}, value: function (u, v) { return rateText(v); }});
      s2.push({label: Math.round(floor * 100) + '% delivered', stroke: '#d62728', width: 1, dash: [2, 3], points: {show: false}, value: function (u, v) { return rateText(v); }});
      var fig2 = figure(row, 'chart-cap-achieved-' + di, d.name + ': achieved rate against the offered rate (open loop: requests sent on schedule per second of the window); a step is delivered at ' + Math.round(floor * 100) + '% of its plan', false);
      mount(fig2, function (w) {
        return {
          data: joined2,
          opts: {
            width: w, height: 300, scales: {x: {time: false}, y: {range: function (u, mn, mx) { return [0, mx * 1.05]; }}},
            series: s2,
            axes: [{label: 'offered rate (/s)', values: axisValues}, {label: 'achieved (/s)', size: 70, values: axisValues}],
            hooks: {draw: [function (u) { if (cap != null) vline(u, cap, '#2ca02c', 'capacity', [2, 0]); }]}
          }
        };
      });
      /* 6b'. error rate per step */
      var t3 = [rates, ladder.map(function (g) { return num(obj(g.median).error_rate); })];
      var s3 = [{label: 'offered rate (/s)'}, {label: 'error rate (median)', stroke: PALETTE[3], width: 2, spanGaps: true, value: function (u, v) { return v == null ? '-' : (100 * v).toFixed(2) + '%'; }}];
      for (var e = 0; e < nreps; e++) {
        (function (e) {
          t3.push(ladder.map(function (g) { return num(obj(arr(g.reps)[e]).error_rate); }));
          s3.push(Object.assign(pointsOnly(PALETTE[3] + 'aa', 5), {label: 'rep ' + (e + 1), value: function (u, v) { return v == null ? '-' : (100 * v).toFixed(2) + '%'; }}));
        })(e);
      }
      var fig3 = figure(row, 'chart-cap-errors-' + di, d.name + ': failed among sent at each offered rate (error_rate: http_error, invalid, transport, timeout)', false);
      mount(fig3, function (w) {
        return {
          data: t3,
          opts: {
            width: w, height: 300, scales: {x: {time: false}, y: {range: function (u, mn, mx) { return [0, Math.max(0.01, mx * 1.1)]; }}},
            series: s3,
            axes: [{label: 'offered rate (/s)', values: axisValues}, {label: 'error rate', size: 60, values: function (u, vs) { return vs.map(function (v) { return fmtAxis(100 * v) + '%'; }); }}]
          }
        };
      });
    }
    /* 6c. the ladder x repetition grid */
    var grow = docRow(host, 'The ladder x repetition grid', 'Each cell is one measured window: held or not, its p99 and achieved rate; hover for why a step was not held. An excluded repetition (its probe fell short, or it did not run) does not vote.');
    var head = ['rate'];
    for (var k = 0; k < nreps; k++) {
      var ri = obj(repsInfo[k]);
      head.push({text: 'rep ' + (k + 1) + (ri.valid === false ? ' (excluded)' : ''), title: ri.excluded || ''});
    }
    head.push('held by', 'rate held');
    table(grow, 'cap-grid-' + di, null, head, ladder.map(function (g) {
      var cells = [{text: rateText(g.rate)}];
      arr(g.reps).forEach(function (st, k) {
        st = obj(st);
        var excluded = st.valid === false || obj(repsInfo[k]).valid === false;
        cells.push({text: (st.ran === false ? 'not run' : (st.held ? 'held' : 'not held') + ' · p99 ' + fmtMs(num(st.p99)) + ' ms · ' + rateText(st.achieved)),
          cls: excluded ? 'muted' : st.held ? 'good' : 'bad', title: st.reason || (st.held ? 'held' : ''), key: 'rep-' + (k + 1)});
      });
      while (cells.length < nreps + 1) cells.push({text: '-'});
      cells.push({text: (num(g.held_by) == null ? '-' : g.held_by) + ' of ' + (num(g.valid_reps) == null ? '-' : g.valid_reps), key: 'held_by'});
      cells.push({text: g.held ? 'held' : 'not held', cls: g.held ? 'good' : 'bad', key: 'held'});
      return {attrs: {'data-rate': String(g.rate)}, cells: cells};
    }));
    /* 6d. probes */
    var probes = arr(doc.probes);
    if (probes.length) {
      var prow = docRow(host, 'Calibration probes', 'Before each repetition the generator sends ' + rateText(cfg.probe_rate) + ' to ' + (cfg.probe_target || 'a target that runs no code') + ': a repetition whose probe falls short measured the generator, not the service, and is excluded.');
      table(prow, 'cap-probes-' + di, null, ['repetition', 'probe', 'planned', 'achieved', 'lag p99', 'reason'], probes.map(function (p) {
        p = obj(p);
        return {attrs: {'data-rep': String(p.rep)}, cells: [String(p.rep), {text: p.ok ? 'ok' : 'SHORT', cls: p.ok ? 'good' : 'bad', key: 'ok'}, {text: rateText(p.planned), key: 'planned'},
          {text: rateText(p.achieved), key: 'achieved'}, {text: fmtMs(num(p.lag_p99)) + ' ms', key: 'lag_p99'}, {text: p.reason || '', key: 'reason'}]};
      }));
    }
  }

  /* ---- knee run --repeat: the repetitions side by side ------------------------------------------------ */

  function repeatDoc(d, di, host) {
    var doc = d.doc, reps = arr(doc.repetitions);
    var row = docRow(host, null, null);
    var title = d.name + ': each repetition\'s p50, p99 and p99.9 (ms, HdrHistogram, as knee run prints them); dashed: the median over the repetitions';
    if (!reps.length) {
      omitted(row, 'chart-repeat-' + di, title, 'no repetition ran');
      return;
    }
    var xs = reps.map(function (r, i) { return num(r.repetition) != null ? r.repetition : i + 1; });
    var keys = [['p50_ms', 'p50', PALETTE[0]], ['p99_ms', 'p99', PALETTE[3]], ['p99.9_ms', 'p99.9', PALETTE[4]]];
    var sum = obj(doc.summary);
    var fig = figure(row, 'chart-repeat-' + di, title, true);
    mount(fig, function (w) {
      return {
        data: [xs].concat(keys.map(function (k) { return reps.map(function (r) { return num(r[k[0]]); }); })),
        opts: {
          width: w, height: 280,
          scales: {x: {time: false, range: [xs[0] - 0.5, xs[xs.length - 1] + 0.5]}, y: {distr: 3, log: 10}},
          series: [{label: 'repetition'}].concat(keys.map(function (k) {
            return Object.assign(pointsOnly(k[2], 8), {label: k[1], value: function (u, v) { return v == null ? '-' : fmtMs(v) + ' ms'; }});
          })),
          axes: [{label: 'repetition', splits: function () { return xs; }, values: function (u, vs) { return vs.map(String); }}, {label: 'latency (ms, log)', size: 70, values: axisValues}],
          hooks: {draw: [function (u) { keys.forEach(function (k) { hline(u, num(obj(sum[k[0]]).median), 'y', k[2], 'median ' + k[1] + ' ' + fmtMs(num(obj(sum[k[0]]).median)) + ' ms', [4, 4]); }); }]}
        }
      };
    });
    table(row, 'repeat-table-' + di, null, ['repetition', 'requests', 'p50 ms', 'p99 ms', 'p99.9 ms', 'mean ms', 'sent /s', ''], reps.map(function (r) {
      return {attrs: {'data-rep': String(r.repetition)}, cells: [String(r.repetition), {text: fmtCount(r.requests), key: 'requests'}, {text: fix3(r.p50_ms), key: 'p50_ms'}, {text: fix3(r.p99_ms), key: 'p99_ms'},
        {text: fix3(r['p99.9_ms']), key: 'p99.9_ms'}, {text: fix3(r.mean_ms), key: 'mean_ms'}, {text: num(r.rate) == null ? '-' : r.rate.toFixed(1), key: 'rate'},
        {text: (r.interrupted ? 'interrupted ' : '') + (r.attention ? 'needs a look (see its summary)' : ''), cls: r.interrupted || r.attention ? 'bad' : null}]};
    }));
  }

  function buildDocs() {
    docs.forEach(function (d, i) {
      var host = document.getElementById('doc-charts-' + i);
      if (!host) return;
      if (d.kind === 'compare') compareDoc(d, i, host);
      else if (d.kind === 'capacity') capacityDoc(d, i, host);
      else if (d.kind === 'repeat') repeatDoc(d, i, host);
    });
  }

  /* ---- 7. streamed responses (knee run --stream) ---------------------------------------------- */

  /* The run JSON's stream objects: first_event and event_gap summaries (ms), their spectra when
   * the JSON has them (a knee that wrote none: the summary's percentiles alone are drawn). */
  var STREAM_KINDS = [
    {key: 'first_event', id: 'first', what: 'time to the first event', axis: 'planned send -> first event (ms)'},
    {key: 'event_gap', id: 'gap', what: 'gaps between events', axis: 'gap between two events (ms)'}
  ];

  function ms3(v) { v = num(v); return v == null ? '-' : v.toFixed(3); }

  function streamSeries(run) { /* [{name, s (stream object)}]: all first when there are several */
    var st = run.stream;
    if (!st) return [];
    var out = st.all ? [{name: 'all', s: obj(st.all)}] : [];
    arr(st.targets).forEach(function (t) { out.push({name: String(obj(t).name), s: obj(t)}); });
    return out;
  }

  /* The line to draw for a summary: its spectrum, else its percentiles (and the minimum at x = 1). */
  function streamLine(s, key) {
    var sum = obj(s[key]), sp = obj(obj(s.spectrum)[key]);
    if (!(num(sum.count) > 0)) return null;
    if (arr(sp.p).length && arr(sp.p).length === arr(sp.ms).length)
      return {p: sp.p, v: sp.ms, full: true};
    var p = [], v = [];
    [[0, 'min'], [0.5, 'p50'], [0.9, 'p90'], [0.95, 'p95'], [0.99, 'p99'], [0.999, 'p99.9']].forEach(function (q) {
      if (num(sum[q[1]]) != null) { p.push(q[0]); v.push(sum[q[1]]); }
    });
    return p.length ? {p: p, v: v, full: false} : null;
  }

  /* "name: 1,200 responses, p50 12.000 ms, ..., max 90.000 ms" with the JSON's numbers. */
  function streamNumbers(name, key, s) {
    var sum = obj(s[key]);
    var head = name + ': ' + fmtCount(num(sum.count)) + (key === 'first_event' ? ' first events' : ' gaps');
    if (!(num(sum.count) > 0)) return head;
    return head + ', p50 ' + ms3(sum.p50) + ', p90 ' + ms3(sum.p90) + ', p99 ' + ms3(sum.p99) + ', p99.9 ' +
      ms3(sum['p99.9']) + ', max ' + ms3(sum.max) + ', mean ' + ms3(sum.mean) + ' ms';
  }

  function streamCounts(name, s) {
    var per = obj(s.events_per_response);
    var t = name + ': ' + fmtCount(num(s.events)) + ' events in ' + fmtCount(num(s.responses)) + ' responses' +
      (num(per.mean) != null ? ' (mean ' + num(per.mean).toFixed(2) + ', max ' + fmtCount(num(per.max)) + ' a response)' : '') +
      (num(s.events_per_s) != null ? ', ' + rateText(s.events_per_s).replace('/s', ' events/s') : '');
    if (num(s.not_sse) > 0) t += '; ' + fmtCount(s.not_sse) + ' not text/event-stream';
    if (num(s.partial) > 0) t += '; ' + fmtCount(s.partial) + ' ended inside an event (invalid)';
    return t;
  }

  function streamChart(row, run, ri, kind) {
    var ss = streamSeries(run);
    var lines = [];
    ss.forEach(function (x, i) {
      var l = streamLine(x.s, kind.key);
      if (l) lines.push({label: x.name + (l.full ? '' : ' (the JSON\'s percentiles only)'), l: l, color: PALETTE[i % PALETTE.length]});
    });
    if (!lines.length) return false;
    var title = run.name + ': ' + kind.what + ', at each percentile (x = 1/(1 - p), log), ' +
      (kind.key === 'first_event' ? (run.mode === 'closed' ? 'from the send (closed loop)' : 'from the planned send') : 'within each response');
    var fig = el('figure', 'chart stream');
    fig.id = 'chart-stream-' + kind.id + '-' + ri;
    fig.appendChild(el('figcaption', null, title));
    fig.appendChild(el('div', 'controls'));
    ss.forEach(function (x, i) {
      var n = el('p', 'note numbers', streamNumbers(x.name, kind.key, x.s));
      n.setAttribute('data-target', x.name);
      n.setAttribute('data-kind', kind.key);
      if (streamLine(x.s, kind.key)) n.style.borderLeftColor = PALETTE[i % PALETTE.length];
      fig.appendChild(n);
    });
    fig.appendChild(el('div', 'plot'));
    row.appendChild(fig);
    var tables = lines.map(function (x) { return [x.l.p.map(function (p) { return 1 / (1 - p); }), x.l.v]; });
    var joined = uPlot.join(tables);
    var gname = 'stream-' + kind.id + '-y', xname = 'stream-' + kind.id + '-x';
    lines.forEach(function (x) { extend(gname, x.l.v); });
    var xlast = joined[0][joined[0].length - 1];
    /* the runs' charts of a kind share their axes, to the next power of ten so its percentile is labelled */
    extend(xname, [1, Math.pow(10, Math.ceil(Math.log10(Math.max(10, xlast)) - 1e-9))]);
    var g = group(gname);
    if (g.log == null) g.log = false;
    var p = mount(fig, function (w) {
      return {
        data: joined,
        opts: {
          width: w, height: 300,
          scales: {x: {time: false, distr: 3, log: 10, range: xRange(xname, [1, xlast])},
                   y: g.log ? {distr: 3, log: 10, range: logRange(gname)} : {range: zeroRange(gname, 1.05, 1e-3)}},
          series: [{label: 'percentile', value: function (u, v) { return v == null ? '-' : pct(v); }}].concat(lines.map(function (x) {
            return {label: x.label, stroke: x.color, width: 1.8, spanGaps: true, points: {show: !x.l.full, size: 5},
              value: function (u, v) { return v == null ? '-' : fmtMs(v) + ' ms'; }};
          })),
          axes: [{label: 'percentile (1/(1-p), log scale)', values: function (u, v) { return v.map(pct); },
                  splits: function (u, ai, mn, mx) {
                    var out = [];
                    for (var x = 1; x <= mx * 1.0001; x *= 10) if (x >= mn * 0.9999) out.push(x);
                    return out;
                  }},
                 {label: kind.axis + (g.log ? ', log' : ''), size: 70, values: axisValues}]
        }
      };
    });
    joinGroup(p, gname);
    groupButton(fig, 'log ms', gname, true);
    return true;
  }

  /* Per run with a stream: the first-event chart and the gap chart, the runs side by side. */
  function streams() {
    var with_ = [];
    runs.forEach(function (run, i) { if (streamSeries(run).length) with_.push({run: run, i: i}); });
    if (!with_.length) return;
    var row = section('Streamed responses', 'knee run --stream times the events of each streamed body (server-sent ' +
      'events, or chunks). First event: from the planned send (the schedule\'s T0; in a closed loop the actual send) ' +
      'to the first whole event, so queueing before the send and the server\'s wait before its first token both count, ' +
      'as time to first token. Event gap: the time between two successive events of one response (0 for events that ' +
      'came in one read), every gap of every response, as inter-token latency. The numbers are the run JSON\'s.');
    STREAM_KINDS.forEach(function (kind) {
      with_.forEach(function (x) { streamChart(row, x.run, x.i, kind); });
    });
    with_.forEach(function (x) {
      var p = el('p', 'note stream-counts');
      p.id = 'stream-counts-' + x.i;
      p.textContent = streamSeries(x.run).map(function (y) { return streamCounts((runs.length > 1 ? x.run.name + ', ' : '') + y.name, y.s); }).join('. ');
      row.parentNode.appendChild(p);
    });
  }

  /* ---- the page ------------------------------------------------------------------------------- */

  function build() {
    buildDocs();
    if (!runs.length) return;
    var r1 = section('Latency histogram', 'Doubling buckets (each twice as wide as the one before) on a log axis, as knee stats draws them in the terminal; the markers are HdrHistogram percentiles, the same numbers as the summary.');
    runs.forEach(function (run, i) { histogram(r1, run, i); });
    var r2 = section('Percentile spectrum', 'The latency at every percentile, the tail stretched out: each step right is ten times rarer. Dashed: service time (from the actual send), which hides the generator\'s delay and coordinated omission.');
    spectrum(r2);
    streams();
    var r3 = section('Latency over time', 'Each dot is a real request. Latency from the planned send shows a stall as a sawtooth that service time alone does not; dropped requests have no latency and are ticked at the bottom.');
    runs.forEach(function (run, i) { overTime(r3, run, i); });
    var r4 = section('Heatmap', 'Time against doubling latency buckets: where the requests were, second by second.');
    runs.forEach(function (run, i) { heatmap(r4, run, i); });
    var r5 = section('Rates, outcomes and the generator', 'What was planned, sent, completed and succeeded each second, the failures by class, and whether the generator kept its schedule.');
    runs.forEach(function (run, i) { rates(r5, run, i); });
  }

  function publish() { /* where each chart's plot area is, for tests */
    var n = 0;
    plots.forEach(function (p) {
      var r = p.u.over.getBoundingClientRect();
      p.fig.setAttribute('data-box', [Math.round(r.left + window.scrollX), Math.round(r.top + window.scrollY), Math.round(r.width), Math.round(r.height)].join(','));
      p.fig.setAttribute('data-drawn', '1');
      Object.keys(p.u.scales).forEach(function (k) { /* the axes as drawn: data-scale-y="0,220" */
        var sc = p.u.scales[k];
        if (sc.min != null && sc.max != null) p.fig.setAttribute('data-scale-' + k, sc.min + ',' + sc.max);
      });
      n++;
    });
    Array.prototype.forEach.call(document.querySelectorAll('table.data'), function (t) { /* for crops */
      var r = t.getBoundingClientRect();
      t.setAttribute('data-box', [Math.round(r.left + window.scrollX), Math.round(r.top + window.scrollY), Math.round(r.width), Math.round(r.height)].join(','));
    });
    status.setAttribute('data-charts', String(n));
    status.setAttribute('data-omitted', String(document.querySelectorAll('figure.omitted').length));
    status.setAttribute('data-height', String(Math.ceil(document.documentElement.scrollHeight)));
    status.setAttribute('data-ms', String(Math.round(performance.now()))); /* navigation start to drawn */
    status.setAttribute('data-state', 'ready');
  }

  var lastW = 0;
  function resize() {
    var w = document.documentElement.clientWidth;
    if (w === lastW) return;
    lastW = w;
    plots.forEach(function (p) { p.u.setSize({width: plotWidth(p.fig), height: p.u.height}); });
  }

  try {
    build();
    plots.forEach(function (p) { p.draw(); });
    lastW = document.documentElement.clientWidth;
    window.addEventListener('resize', resize);
    window.addEventListener('beforeprint', function () { lastW = 0; plots.forEach(function (p) { p.u.setSize({width: 700, height: p.u.height}); }); });
    window.addEventListener('afterprint', function () { lastW = 0; resize(); });
    setTimeout(publish, 0); /* uPlot lays out and draws in a microtask: after it */
  } catch (e) {
    status.setAttribute('data-state', 'error');
    status.textContent = 'knee report: a chart failed: ' + e;
    throw e;
  }
})();
