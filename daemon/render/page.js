// The live page's script (embedded in topdownd; its hash is in the CSP).
// It fetches the JSON API every interval and redraws what page.c drew on
// the server, the same markup from the same documents.
'use strict';
(function () {
  const SVG = 'http://www.w3.org/2000/svg';
  const HEAT_COLUMNS = 16, HIST_W = 1000, HIST_H = 100;
  const body = document.body;
  const interval = Math.max(1, Number(body.dataset.interval) || 1);
  const historyLength = Number(body.dataset.history) || 900;
  let heat = body.dataset.heat;
  let now = null;
  let hist = null;
  let failures = 0;

  function el(ns, tag, attrs, kids) {
    const e = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    for (const kid of kids || []) e.append(kid);
    return e;
  }
  const h = (tag, attrs, kids) => el(null, tag, attrs, kids);
  const s = (tag, attrs, kids) => el(SVG, tag, attrs, kids);
  const words = (name) => name.replace(/_/g, ' ');
  const pct = (v) => (100 * v).toFixed(1) + ' %';

  function bottleneck(e) {
    const p = h('p', { class: 'bneck' }, ['Bottleneck: ']);
    if (!e.bottleneck) {
      p.append(h('b', {}, ['none (no slots counted)']));
      return p;
    }
    const [parent, child] = e.bottleneck.split('.');
    const v = child ? e.level2[child] : e.level1[parent];
    p.append(h('b', {}, [words(parent) + (child ? ' \u2192 ' + words(child) : '') + ', ' + pct(v)]));
    return p;
  }

  function rect(cat, extra, x, y, v) {
    return s('rect', { class: 'c-' + cat + extra, 'data-cat': cat, x: (100 * x).toFixed(3), y: y,
      width: (100 * v).toFixed(3), height: 1 }, [s('title', {}, [words(cat) + ' ' + pct(v)])]);
  }

  function treeBar(e) {
    const svg = s('svg', { class: 'tree', viewBox: '0 0 100 2.1', preserveAspectRatio: 'none',
      role: 'img', 'aria-label': 'bottleneck tree' });
    let x = 0;
    for (const [cat, v] of Object.entries(e.level1)) {
      svg.append(rect(cat, '', x, 0, v));
      let cx = x, k = 0;
      for (const [child, cv] of Object.entries((e.level2_by_parent || {})[cat] || {})) {
        svg.append(rect(child, ' l2 k' + (k++ % 3), cx, 1.1, cv));
        cx += cv;
      }
      x += v;
    }
    return svg;
  }

  function legendRow(cat, cls, k, v, top, pmu) {
    return h('tr', { class: cls + (top ? ' top' : '') }, [
      h('td', {}, [h('i', { class: 'sw c-' + cat + ' ' + cls + ' k' + k }),
        words(cat) + (pmu ? ' (' + pmu + ')' : '')]),
      h('td', { class: 'v' }, [pct(v)])]);
  }

  // Below level 2: the level-3 nodes under the bottleneck's level-2
  // category in each core PMU's tree, with their values (page.c
  // put_deeper); on a hybrid part each core type's, named with it.
  function deeper(t, e, trees, l2) {
    const by = e.nodes_by_pmu;
    (trees || []).forEach((tree, k) => {
      const vals = by ? (by[tree.pmu] || {}).nodes || {} : (k === 0 ? e.nodes || {} : {});
      for (const n of tree.nodes || []) {
        const v = vals[n.node];
        if (n.level === 3 && n.parent === l2 && typeof v === 'number')
          t.append(legendRow(n.node, 'l3', 0, v, false, by ? tree.pmu : null));
      }
    });
  }

  function legend(e, trees) {
    const t = h('table', { class: 'legend' });
    const [bp, bc] = (e.bottleneck || '').split('.');
    for (const [cat, v] of Object.entries(e.level1)) {
      const top = cat === bp;
      t.append(legendRow(cat, 'l1', 0, v, top));
      let k = 0;
      for (const [child, cv] of Object.entries((e.level2_by_parent || {})[cat] || {})) {
        const here = top && child === bc;
        t.append(legendRow(child, 'l2', k++ % 3, cv, here));
        if (here) deeper(t, e, trees, child);
      }
    }
    return t;
  }

  function running(e) {
    if (typeof e.running_ratio !== 'number') return null;
    const low = e.running_ratio < 0.995;
    return h('p', { class: low ? 'state warn' : 'state' }, ['Counters running ' + pct(e.running_ratio) +
      ' of the time' + (low ? ': they are shared with another user of the PMU (perf, another ' +
      'topdownd) or rotate among groups; the figures are scaled to the whole interval, as perf does'
      : '') + '.']);
  }

  function entity(id, title, e, trees) {
    const d = h('div', { class: 'entity', id: 'e-' + id }, [h('h3', {}, [title]), bottleneck(e)]);
    if (e.level1) d.append(treeBar(e), legend(e, trees));
    const r = running(e);
    if (r) d.append(r);
    return d;
  }

  function when(doc) {
    const t = new Date(Math.floor(doc.timestamp) * 1000).toISOString().slice(0, 19).replace('T', ' ');
    return 'interval ' + doc.intervals + ', ' + t + ' UTC';
  }

  function state(doc) {
    const st = doc.cpus_by_state;
    let total = 0;
    for (const k in st) total += st[k];
    let text = st.monitored + ' of ' + total + ' CPUs monitored';
    for (const k in st) if (k !== 'monitored' && st[k] > 0) text += ', ' + st[k] + ' ' + k;
    // The figures are over the CPUs measured in the last interval.
    const host = doc.host || {};
    if (host.cpus_measured !== undefined && host.cpus_measured < host.cpus_expected)
      text += '; the figures are over ' + host.cpus_measured + ' of ' + host.cpus_expected + ' CPUs';
    const out = [h('p', { class: 'state', id: 'cpus' }, [text + '.'])];
    for (const p of doc.pmus || [])
      if (p.reason) out.push(h('p', { class: 'state warn' }, [p.name + ': ' + p.reason]));
    if (!(doc.pmus || []).length && doc.pmu && doc.pmu.reason)
      out.push(h('p', { class: 'state warn' }, [doc.pmu.reason]));
    return out;
  }

  function valueOf(e, cat) {
    // The SMT split's "both threads running" (issue 43).
    if (cat === 'smt_both') return e.smt && e.smt.last ? e.smt.last.both : null;
    if (e.level1 && cat in e.level1) return e.level1[cat];
    if (e.level2 && cat in e.level2) return e.level2[cat];
    return null;
  }

  function heatCategory(doc) {
    const host = doc.host;
    if (heat && (valueOf(host, heat) !== null || (heat === 'smt_both' && host.smt))) return heat;
    if (!host.level1) return null;
    const cats = Object.keys(host.level1);
    if (host.bottleneck) {
      const p = host.bottleneck.split('.')[0];
      if (cats.includes(p)) return p;
    }
    return cats.length ? cats[0] : null;
  }

  function heatSelect(doc, cat) {
    const sel = document.getElementById('heat');
    if (!sel) return;
    const want = [];
    for (const [c] of Object.entries(doc.host.level1 || {})) {
      want.push([c, words(c)]);
      for (const child of Object.keys((doc.host.level2_by_parent || {})[c] || {}))
        want.push([child, '\u00a0\u00a0' + words(child)]);
    }
    if (doc.host.smt) want.push(['smt_both', 'both threads running (SMT)']);
    const have = Array.from(sel.options).map((o) => o.value).join();
    if (have !== want.map((w) => w[0]).join()) {
      sel.replaceChildren(...want.map(([v, t]) => h('option', { value: v }, [t])));
    }
    sel.value = cat;
  }

  function heatmaps(doc, cat) {
    const out = [];
    for (const pkg of doc.packages || []) {
      const cores = (doc.cores || []).filter((c) => c.package === pkg.package);
      const rows = Math.ceil(cores.length / HEAT_COLUMNS);
      const svg = s('svg', { class: 'heat', 'data-package': pkg.package,
        viewBox: '0 0 ' + HEAT_COLUMNS * 11 + ' ' + (rows ? rows * 11 : 1), role: 'img',
        'aria-label': 'cores of package ' + pkg.package });
      cores.forEach((core, n) => {
        const v = valueOf(core, cat);
        const x = (n % HEAT_COLUMNS) * 11, y = Math.floor(n / HEAT_COLUMNS) * 11;
        svg.append(s('rect', { class: 'cell-bg', x: x, y: y, width: 10, height: 10 }));
        const cpus = core.cpus || [];
        svg.append(s('rect', { class: 'c-' + cat, 'data-core': core.core, x: x, y: y, width: 10,
          height: 10, 'fill-opacity': (v === null ? 0 : Math.min(1, Math.max(0, v))).toFixed(3) },
        [s('title', {}, ['core ' + core.core + ' (CPU' + (cpus.length > 1 ? 's' : '') + ' ' +
          cpus.join(', ') + '): ' + (cat === 'smt_both' ? 'both threads running' : words(cat)) + ' ' + (v === null ? 'not counted' : pct(v))])]));
        svg.append(s('text', { x: x + 5, y: y + 5 }, [v === null ? '-' : (100 * v).toFixed(0)]));
      });
      out.push(h('h3', {}, ['package ' + pkg.package]), svg);
    }
    return out;
  }

  function drawHeat() {
    const box = document.getElementById('heatmaps');
    if (!now || !box) return;
    const cat = heatCategory(now);
    if (!cat) return;
    heatSelect(now, cat);
    box.replaceChildren(...heatmaps(now, cat));
  }

  function drawNow(doc) {
    document.getElementById('when').textContent = when(doc);
    const old = document.querySelectorAll('#now > p.state');
    const first = old.length ? old[0] : null;
    const states = state(doc);
    if (first) first.before(...states);
    old.forEach((p) => p.remove());
    const ents = [entity('host', 'host', doc.host, doc.trees)];
    for (const pkg of doc.packages || [])
      ents.push(entity('package-' + pkg.package, 'package ' + pkg.package, pkg, doc.trees));
    document.getElementById('entities').replaceChildren(...ents);
    drawHeat();
  }

  // Level 1 over the history: the same areas page.c draws.
  function chart(pkg, end) {
    const svg = s('svg', { class: 'hist', viewBox: '0 0 ' + HIST_W + ' ' + HIST_H,
      preserveAspectRatio: 'none', role: 'img', 'aria-label': 'level 1 over the last ' +
      historyLength + ' s' });
    const l1cats = hist.categories.filter((c) => c.level === 1).map((c) => c.name);
    const xOf = (t) => HIST_W * (t - end + historyLength) / historyLength;
    for (let c = l1cats.length - 1; c >= 0; c--) {
      let d = '', open = false, lastX = 0;
      for (const smp of hist.samples) {
        const e = pkg === null ? smp.host : (smp.packages || {})[pkg];
        const x1 = xOf(smp.end);
        if (x1 <= 0) continue;
        const x0 = Math.max(0, xOf(smp.start));
        if (!e || !e.level1) {
          if (open) d += 'L' + xFix(lastX) + ' ' + HIST_H + 'Z';
          open = false;
          continue;
        }
        let top = 0;
        for (let k = 0; k <= c; k++) top += e.level1[l1cats[k]] || 0;
        const y = (HIST_H * (1 - top)).toFixed(1);
        if (!open) d += 'M' + xFix(x0) + ' ' + HIST_H;
        d += 'L' + xFix(x0) + ' ' + y + 'L' + xFix(x1) + ' ' + y;
        open = true;
        lastX = x1;
      }
      if (open) d += 'L' + xFix(lastX) + ' ' + HIST_H + 'Z';
      svg.append(s('path', { class: 'c-' + l1cats[c], 'data-cat': l1cats[c], d: d }));
    }
    return svg;
  }
  const xFix = (v) => v.toFixed(1);

  function drawHistory() {
    if (!hist || !now) return;
    const end = now.timestamp;
    const slot = (id, pkg) => {
      const div = document.getElementById(id);
      if (div) div.querySelector('svg.hist').replaceWith(chart(pkg, end));
    };
    slot('h-host', null);
    for (const pkg of now.packages || []) slot('h-package-' + pkg.package, String(pkg.package));
  }

  function mergeHistory(doc) {
    if (!hist || hist.level !== doc.level) {
      hist = doc;
    } else {
      const last = hist.samples.length ? hist.samples[hist.samples.length - 1].end : 0;
      hist.samples.push(...doc.samples.filter((x) => x.end > last));
      hist.categories = doc.categories;
    }
    const oldest = (now ? now.timestamp : 0) - historyLength;
    hist.samples = hist.samples.filter((x) => x.end > oldest);
  }

  function status(text) {
    let p = document.getElementById('live');
    if (!p) {
      p = h('p', { class: 'state warn', id: 'live' });
      document.querySelector('header').append(p);
    }
    p.textContent = text;
    p.hidden = !text;
  }

  async function getJSON(url) {
    const r = await fetch(url, { cache: 'no-store' });
    if (!r.ok) throw new Error(url + ': ' + r.status + ' ' + (await r.text()).trim());
    return r.json();
  }

  async function tick() {
    try {
      now = await getJSON('api/v1/topdown?scope=core&level=3');
      const last = hist && hist.samples.length ? hist.samples[hist.samples.length - 1].end : 0;
      mergeHistory(await getJSON('api/v1/topdown/history' + (last ? '?since=' + last : '')));
      drawNow(now);
      drawHistory();
      failures = 0;
      status('');
    } catch (err) {
      failures++;
      status('Not updating: ' + err.message + (failures > 1 ? ' (' + failures + ' tries)' : '') +
        '; trying again.');
    }
    setTimeout(tick, 1000 * Math.min(interval * Math.min(failures + 1, 30), 60));
  }

  const sel = document.getElementById('heat');
  if (sel) {
    sel.addEventListener('change', () => {
      heat = sel.value;
      const u = new URL(location.href);
      u.searchParams.set('heat', heat);
      history.replaceState(null, '', u);
      drawHeat();
    });
  }
  tick();
})();
