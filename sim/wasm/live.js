/*
 * live.js -- the live panel of `dilosim report --interactive`: the C
 * engine compiled to WebAssembly (make wasm: sim/wasm/engine.c), driven
 * by sliders and fields, the view kept in the URL's hash.
 *
 * The hash holds the overrides as `dilosim run --set` takes them, in
 * order, joined by "&" (each KEY=VALUE URI-encoded):
 *     #network.bandwidth_gbps=1&method.H=50&variant=diloco&target_cu=0.9
 * two names are the page's own: `variant` (the scenario's variant, as
 * --variant names it) and `target_cu` (the plan's target, default 0.95).
 * It is read on load and on hashchange and written with
 * history.replaceState as the controls move.  A control writes its key
 * only once it is moved: the scenario's own values stand until then.
 *
 * Every figure comes from the engine as the command line prints it: #cu's
 * data-value is `dilosim run`'s compute_utilization text, #bytes' its
 * bytes_sent_total, #plan-least `dilosim plan --json`'s least_gbps (null
 * when not reached).  An input
 * error shows the loader's one-line message in #live-error.  When the
 * page has answered, the root element's data-live is "ready" (or
 * "error").
 */
(function () {
  'use strict';
  var conf = JSON.parse(document.getElementById('live-config').textContent);
  var engine = null;
  var state = { variant: '', target: conf.target, sets: [] };
  var timer = null;

  function $(id) { return document.getElementById(id); }

  /* A call into the engine: its JSON answer, parsed. */
  function call(fn, types, args) {
    var p = engine.ccall(fn, 'number', types, args);
    if (!p) return { error: 'out of memory', status: 1 };
    var text = engine.UTF8ToString(p);
    engine._dl_free(p);
    return JSON.parse(text);
  }

  function setsText() {
    return state.sets.map(function (kv) { return kv[0] + '=' + kv[1]; }).join('\n');
  }

  function getSet(key) {
    for (var i = 0; i < state.sets.length; i++)
      if (state.sets[i][0] === key) return state.sets[i][1];
    return null;
  }

  function putSet(key, value) {
    for (var i = 0; i < state.sets.length; i++)
      if (state.sets[i][0] === key) { state.sets[i][1] = value; return; }
    state.sets.push([key, value]);
  }

  function readHash() {
    state.variant = conf.variant || '';
    state.target = conf.target;
    state.sets = [];
    var h = location.hash.replace(/^#/, '');
    if (!h) return;
    h.split('&').forEach(function (part) {
      if (!part) return;
      var eq = part.indexOf('=');
      var k = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
      var v = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1));
      if (k === 'variant') state.variant = v;
      else if (k === 'target_cu') state.target = v;
      else state.sets.push([k, v]);
    });
  }

  function writeHash() {
    var parts = [];
    if (state.variant && state.variant !== (conf.variant || ''))
      parts.push('variant=' + encodeURIComponent(state.variant));
    if (String(state.target) !== String(conf.target))
      parts.push('target_cu=' + encodeURIComponent(state.target));
    state.sets.forEach(function (kv) {
      parts.push(encodeURIComponent(kv[0]).replace(/%2E/g, '.') + '=' +
                 encodeURIComponent(kv[1]));
    });
    history.replaceState(null, '', '#' + parts.join('&'));
  }

  /* ---- the controls -------------------------------------------------- */

  /* key: the scenario key a control sets; from: its value in a run's
   * JSON (the scenario's own, shown until the control moves). */
  var controls = [
    { id: 'bw', key: 'network.bandwidth_gbps', from: 'up_gbps', log: true },
    { id: 'lat', key: 'network.latency_ms', from: 'latency_ms' },
    { id: 'workers', key: 'workers.count', from: 'workers' },
    { id: 'H', key: 'method.H', from: 'H' },
    { id: 'fragments', key: 'method.fragments', from: 'fragments' },
    { id: 'tau', key: 'method.tau', from: 'tau' },
    { id: 'codec', key: 'method.codec', from: 'codec' },
    { id: 'mtbf', key: 'faults.mtbf_hours', from: 'mtbf_s', scale: 3600 },
    { id: 'mttr', key: 'faults.mttr_hours', from: 'mttr_s', scale: 3600 }
  ];

  function showValues(run) {
    controls.forEach(function (c) {
      var field = $('in-' + c.id), v = getSet(c.key);
      if (v === null && run && run[c.from] !== undefined) {
        v = run[c.from];
        if (c.scale && typeof v === 'number') v = v / c.scale;
      }
      if (v === null || document.activeElement === field) return;
      field.value = String(v);
      var slider = $('sl-' + c.id);
      if (slider && !isNaN(parseFloat(v)))
        slider.value = String(c.log ? Math.log10(parseFloat(v)) : v);
    });
    $('in-target').value = String(state.target);
    $('in-variant').value = state.variant;
  }

  function onControl(c, fromSlider) {
    var v;
    if (fromSlider) {
      var s = parseFloat($('sl-' + c.id).value);
      v = c.log ? String(Number(Math.pow(10, s).toPrecision(3))) : String(s);
      $('in-' + c.id).value = v;
    } else {
      v = $('in-' + c.id).value.trim();
    }
    putSet(c.key, v);
    schedule();
  }

  function wire() {
    controls.forEach(function (c) {
      $('in-' + c.id).addEventListener('change', function () { onControl(c, false); });
      var s = $('sl-' + c.id);
      if (s) s.addEventListener('input', function () { onControl(c, true); });
    });
    $('in-target').addEventListener('change', function () {
      state.target = $('in-target').value.trim();
      schedule();
    });
    $('in-variant').addEventListener('change', function () {
      state.variant = $('in-variant').value;
      schedule();
    });
    window.addEventListener('hashchange', function () { readHash(); schedule(true); });
  }

  /* The variant selector: every variant, named as a person names its
   * method (scn_method_label). */
  function fillVariants() {
    var m = call('dl_methods', ['string', 'string'], [conf.path, '']);
    var sel = $('in-variant');
    sel.textContent = '';
    (m.variants || [{ name: null, label: '(the scenario)' }]).forEach(function (v) {
      var o = document.createElement('option');
      o.value = v.name === null ? '' : v.name;
      o.textContent = (v.name === null ? '' : v.name + ': ') + v.label;
      sel.appendChild(o);
    });
    if (!state.variant && m.variants && m.variants[0] && m.variants[0].name)
      conf.variant = state.variant = m.variants[0].name;
  }

  /* ---- the answers ----------------------------------------------------- */

  function fmt(x, digits) {
    if (x === null || x === undefined) return '\u2013';
    var t = Number(x).toPrecision(digits || 4);
    /* trailing zeros of a fraction only: 1000 stays, 0.9500 is 0.95 */
    if (t.indexOf('.') >= 0) t = t.replace(/0+(e|$)/, '$1').replace(/\.(e|$)/, '$1');
    return t;
  }

  function bytesText(b) {
    var u = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'], i = 0;
    while (b >= 1000 && i < u.length - 1) { b /= 1000; i++; }
    return (i ? b.toPrecision(3) : String(b)) + ' ' + u[i];
  }

  function setValue(id, text, shown) {
    var e = $(id);
    e.setAttribute('data-value', text === null ? '' : text);
    e.textContent = shown;
  }

  function showExplain(ex) {
    var t = $('live-explain');
    t.textContent = '';
    if (!ex) {
      t.textContent = 'The breakdown of the wall time is not in this build of the engine.';
      return;
    }
    $('live-sentence').textContent = ex.sentence || '';
    var wall = ex.wall_time_s, tab = document.createElement('table');
    tab.className = 'explain';
    tab.innerHTML = '<tr><th>part</th><th>s</th><th>share</th><th></th></tr>';
    Object.keys(ex.parts).forEach(function (name) {
      var s = ex.parts[name], tr = document.createElement('tr');
      tr.setAttribute('data-part', name);
      tr.setAttribute('data-value', String(s));
      var share = wall > 0 ? s / wall : 0;
      tr.innerHTML = '<td></td><td class="v"></td><td class="v"></td>' +
        '<td><span class="bar"></span></td>';
      tr.children[0].textContent = name;
      tr.children[1].textContent = fmt(s, 6);
      tr.children[2].textContent = (100 * share).toFixed(1) + ' %';
      tr.children[3].firstChild.style.width = (12 * share).toFixed(2) + 'em';
      tab.appendChild(tr);
    });
    t.appendChild(tab);
  }

  function showCurve(c, bw, target) {
    var box = $('live-curve');
    if (c.error) { box.textContent = c.error; return; }
    var W = 640, Hh = 260, L = 48, R = 12, T = 10, B = 36;
    var x0 = Math.log10(c.gbps[0]), x1 = Math.log10(c.gbps[c.gbps.length - 1]);
    function X(g) { return L + (W - L - R) * (Math.log10(g) - x0) / (x1 - x0 || 1); }
    function Y(cu) { return T + (Hh - T - B) * (1 - cu); }
    var s = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ' + W + ' ' + Hh + '">';
    for (var d = Math.ceil(x0); d <= Math.floor(x1); d++) {
      s += '<line class="grid" x1="' + X(Math.pow(10, d)) + '" x2="' + X(Math.pow(10, d)) +
           '" y1="' + T + '" y2="' + (Hh - B) + '"/>';
      s += '<text x="' + X(Math.pow(10, d)) + '" y="' + (Hh - B + 14) +
           '" text-anchor="middle">' + fmt(Math.pow(10, d)) + '</text>';
    }
    [0, 0.25, 0.5, 0.75, 1].forEach(function (v) {
      s += '<line class="grid" x1="' + L + '" x2="' + (W - R) + '" y1="' + Y(v) + '" y2="' + Y(v) + '"/>';
      s += '<text x="' + (L - 4) + '" y="' + (Y(v) + 4) + '" text-anchor="end">' + (100 * v) + '%</text>';
    });
    s += '<line class="target" x1="' + L + '" x2="' + (W - R) + '" y1="' + Y(target) +
         '" y2="' + Y(target) + '"/>';
    var pts = c.gbps.map(function (g, i) { return X(g).toFixed(1) + ',' + Y(c.cu[i]).toFixed(1); });
    s += '<polyline class="cu" points="' + pts.join(' ') + '"/>';
    if (bw > 0) s += '<line class="now" x1="' + X(bw) + '" x2="' + X(bw) + '" y1="' + T +
                     '" y2="' + (Hh - B) + '"/>';
    s += '<text x="' + ((L + W - R) / 2) + '" y="' + (Hh - 4) +
         '" text-anchor="middle">bandwidth per worker link (Gbit/s, log scale)</text></svg>';
    box.innerHTML = s;
  }

  function fail(msg) {
    $('live-error').textContent = msg;
    setValue('cu', null, '\u2013');
    setValue('bytes', null, '\u2013');
    setValue('plan-least', null, '\u2013');
    document.documentElement.setAttribute('data-live', 'error');
  }

  function update() {
    timer = null;
    writeHash();
    var sets = setsText();
    $('live-error').textContent = '';
    var r = call('dl_run', ['string', 'string', 'string'], [conf.path, state.variant, sets]);
    if (r.error) { showValues(null); fail(r.error); return; }
    showValues(r.run);
    setValue('cu', r.cu_text, (100 * r.cu).toFixed(2) + ' %');
    setValue('bytes', r.bytes_text, bytesText(r.bytes));
    $('live-label').textContent = r.label;
    $('live-wall').textContent = fmt(r.wall_s, 6) + ' s';
    showExplain(r.explain);
    var target = Number(state.target);
    if (!(target > 0 && target <= 1)) {
      fail('target_cu=' + state.target + ': expected a number in (0, 1]');
      return;
    }
    var p = call('dl_plan', ['string', 'string', 'string', 'number'],
                 [conf.path, state.variant, sets, target]);
    if (p.error) { fail(p.error); return; }
    /* not reached: "null", as plan --json prints least_gbps */
    setValue('plan-least', p.least_text === null ? 'null' : p.least_text,
             p.least_status === 'found' ? fmt(p.least_gbps) + ' Gbit/s'
             : p.least_status === 'below_range' ? '\u2264 0.01 Gbit/s' : '> 100000 Gbit/s');
    $('live-target').textContent = String(state.target);
    var c = call('dl_curve', ['string', 'string', 'string', 'string'],
                 [conf.path, state.variant, sets, conf.grid]);
    showCurve(c, r.run.up_gbps, target);
    document.documentElement.setAttribute('data-live', c.error ? 'error' : 'ready');
  }

  function schedule() {
    document.documentElement.setAttribute('data-live', 'busy');
    if (timer) clearTimeout(timer);
    timer = setTimeout(update, 20);
  }

  function start(mod) {
    engine = mod;
    var w = call('dl_scenario', ['string', 'string'], [conf.path, conf.scenario]);
    if (w.error) { fail(w.error); return; }
    readHash();
    fillVariants();
    readHash();
    wire();
    $('live-status').textContent = 'the engine runs in this page (WebAssembly)';
    update();
  }

  /* dilosimEngine: the module's factory (MODULARIZE).  Compiled
   * synchronously (WASM_ASYNC_COMPILATION=0), it returns the module
   * ready, and the page has answered by its load event; a promise (an
   * asynchronous build) is waited for. */
  try {
    // eslint-disable-next-line no-undef
    var mod = dilosimEngine();
    if (mod && typeof mod.then === 'function')
      mod.then(start, function (e) { fail('the engine did not load: ' + e); });
    else if (mod.calledRun) start(mod);
    else mod.onRuntimeInitialized = function () { start(mod); };
  } catch (e) {
    fail('the engine did not load: ' + e);
  }
})();
