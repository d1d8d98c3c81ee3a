/* knee report: draws the charts of the data object (#knee-data, schema knee-report/1) with the
 * embedded uPlot. Each chart's figure says in its title which interval it covers; a chart an
 * input cannot back is replaced by a note saying why. When every chart is drawn, each figure
 * carries data-box="x,y,w,h" (its plot area in page pixels) and #knee-status says "ready", so
 * a headless browser can check the pictures (tests/e2e/report_browser.sh). */
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

  /* A shaded band on the time axis for the warm-up. */
  function warmupHook(run) {
    return function (u) {
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

  function timeAxis(label) {
    return {label: label || 'seconds since the run start', values: axisValues};
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
    var logY = false;
    var marks = ss[0].t.marks;
    var tip = tooltip(fig);
    mount(fig, function (w) {
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
          scales: {x: {time: false, distr: 3, log: 2}, y: logY ? {distr: 3, log: 10} : {range: function (u, mn, mx) { return [0, mx * 1.08]; }}},
          series: [{label: 'bucket (ms)', value: function (u, v, si, i) {
            return i == null || i >= xs.length - 1 ? '-' : fmtMs(xs[i]) + ' .. ' + fmtMs(xs[i + 1]);
          }}].concat(ss.map(function (s) {
            return {label: s.name, stroke: s.color, fill: s.color + '33', width: 1.5, paths: uPlot.paths.stepped({align: 1}),
              points: {show: false}, value: function (u, v) { return fmtCount(v); }};
          })),
          axes: [{label: 'latency (ms), log scale: each bucket twice as wide as the one before', values: axisValues},
                 {label: 'requests' + (logY ? ' (log)' : ''), size: 70, values: axisValues}],
          hooks: {draw: [function (u) { drawMarks(u, marks); }]}
        }
      };
    });
    button(fig, 'log count', function () { logY = !logY; this.classList.toggle('on', logY); plotsOf(fig).draw(); });
    void tip;
  }

  function drawMarks(u, marks) {
    if (!marks) return;
    var ctx = u.ctx, names = ['p50', 'p90', 'p99', 'p99.9', 'max'];
    ctx.save();
    ctx.font = ctxFont(u, 11);
    ctx.lineWidth = uPlot.pxRatio;
    var lastX = -Infinity, row = 0;
    names.forEach(function (k) {
      var v = marks[k];
      if (v == null || v < u.scales.x.min || v > u.scales.x.max) return;
      var x = Math.round(u.valToPos(v, 'x', true));
      ctx.strokeStyle = '#333';
      ctx.setLineDash([4 * uPlot.pxRatio, 3 * uPlot.pxRatio]);
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      ctx.setLineDash([]);
      row = x - lastX < 90 * uPlot.pxRatio ? row + 1 : 0;
      lastX = x;
      ctx.fillStyle = '#111';
      ctx.fillText(k + ' ' + fmtMs(v), x + 3 * uPlot.pxRatio, u.bbox.top + (12 + 13 * (row % 4)) * uPlot.pxRatio);
    });
    ctx.restore();
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
      mount(fig, function (w) {
        return {
          data: closeSteps([xs].concat(ys), tl ? tl.interval_s : 1),
          opts: {
            width: w, height: 320, scales: {x: {time: false}, y: {distr: 3, log: 10}},
            series: [{label: 'interval start (s)', value: function (u, v) { return fmtS(v); }}].concat(['p50', 'p99', 'max'].map(function (n, i) {
              return {label: n, stroke: PALETTE[i], width: 1.5, paths: uPlot.paths.stepped({align: 1}), value: function (u, v) { return fmtMs(v) + ' ms'; }};
            })),
            axes: [timeAxis(), {label: 'latency (ms, log)', size: 70, values: axisValues}],
            hooks: {drawClear: [warmupHook(run)]}
          }
        };
      });
      return;
    }
    var nreq = sc.series.reduce(function (a, s) { return s.key === 'service' ? a : a + s.n; }, 0);
    var fig2 = figure(row, 'chart-time-' + ri, title + '; each ' + fmtMs(sc.column_s * 1000) +
      ' ms column keeps its exact minimum and maximum per series and quarter-doubling band (' + fmtCount(nreq) + ' requests, never sampled)');
    var tip = tooltip(fig2);
    var logY = true;
    var dropped = sc.dropped;
    mount(fig2, function (w) {
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
          scales: {x: {time: false}, y: logY ? {distr: 3, log: 10} : {}},
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
    button(fig2, 'linear ms', function () { logY = !logY; this.classList.toggle('on', !logY); plotsOf(fig2).draw(); });
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
    var max = 1;
    hm.counts.forEach(function (c) { c.forEach(function (n) { if (n > max) max = n; }); });
    var lo = hm.lo_ms.map(function (v, i) { return v > 0 ? v : hm.lo_ms[1] / 2; });
    var tip = tooltip(fig);
    var legend = el('div', 'heatlegend');
    legend.appendChild(el('span', null, '1'));
    var bar = el('span', 'bar');
    bar.style.background = 'linear-gradient(to right,' + [0, 0.25, 0.5, 0.75, 1].map(heatColor).join(',') + ')';
    legend.appendChild(bar);
    legend.appendChild(el('span', null, fmtCount(max) + ' requests'));
    fig.appendChild(legend);
    var xs = hm.t.concat([hm.t[hm.t.length - 1] + hm.interval_s]);
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
      return {
        data: [xs, ys],
        opts: {
          width: w, height: 320,
          scales: {x: {time: false, range: [xs[0], xs[xs.length - 1]]}, y: {distr: 3, log: 2, range: [lo[0], lo[lo.length - 1]]}},
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
      mount(fig, function (w) {
        return {
          data: closeSteps([xs].concat(lines.map(function (l) { return l.y; })), jt && !tl ? 1 : iv),
          opts: {
            width: w, height: 300, scales: {x: {time: false}},
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
    lag(row, run, ri);
  }

  function lag(row, run, ri) {
    var tl = run.timeline;
    var limit = run.lag_limit_ms;
    var title = run.name + ': the generator\'s lag T1 - T0, p99 per ' + (tl ? fmtS(tl.interval_s) : '1') + ' s (by T0; HdrHistogram, 2 digits), ' +
      'with the generator-limited threshold at ' + fmtMs(limit) + ' ms' + (run.lag_limit_known ? ' (--lag-limit)' : ' (knee run\'s default --lag-limit)') +
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
    mount(fig, function (w) {
      return {
        data: closeSteps([tl.t, tl.lag_p99_ms, tl.in_flight], tl.interval_s),
        opts: {
          width: w, height: 260,
          scales: {x: {time: false}, lag: {range: function (u, mn, mx) { return [0, Math.max(mx || 0, limit) * 1.15]; }}, n: {range: function (u, mn, mx) { return [0, Math.max(1, mx) * 1.1]; }}},
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
              ctx.fillText('generator-limited above ' + fmtMs(limit) + ' ms', u.bbox.left + 6 * uPlot.pxRatio, y - 4 * uPlot.pxRatio);
              ctx.restore();
            }]
          }
        }
      };
    });
  }

  /* ---- the page ------------------------------------------------------------------------------- */

  function build() {
    var r1 = section('Latency histogram', 'Doubling buckets (each twice as wide as the one before) on a log axis, as knee stats draws them in the terminal; the markers are HdrHistogram percentiles, the same numbers as the summary.');
    runs.forEach(function (run, i) { histogram(r1, run, i); });
    var r2 = section('Percentile spectrum', 'The latency at every percentile, the tail stretched out: each step right is ten times rarer. Dashed: service time (from the actual send), which hides the generator\'s delay and coordinated omission.');
    spectrum(r2);
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
      n++;
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
