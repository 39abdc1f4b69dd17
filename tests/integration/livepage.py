#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The live page (/) in a real browser: Debian's Chromium, driven through
Selenium and chromedriver.  Prints TAP lines (no plan: 35-live-page.t has
it) and saves screenshots.

Usage: livepage.py URL TRUTHS.json GRAFANA_DASHBOARD OUTDIR
       livepage.py --smoke URL NAME OUTDIR   (another machine: 3 checks)

TRUTHS.json: {"a": {...}, "b": {...}, "b_at": SECONDS, "clock": FILE} --
the level-1 and level-2 fractions of every category in the scenario's two
phases (derived ones included), the fake PMU's time at which phase b
begins, and its clock file (lib.sh's clock_run): phase a holds until this
script moves the clock there (FILE.jump), whatever the machine's load.
The page is checked against those truths and against the JSON API it
reads."""
import hashlib
import base64
import json
import os
import re
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

SMOKE = sys.argv[1] == '--smoke'
if SMOKE:
    URL, NAME, OUTDIR = sys.argv[2:5]
else:
    URL, TRUTHS, DASHBOARD, OUTDIR = sys.argv[1:5]
    truths = json.load(open(TRUTHS))
BASE = URL.rstrip('/') + '/'
n_test = 0

# Grafana's colours by the names the dashboard gives them: the primary
# shades of getDarkHues() in packages/grafana-data/src/themes/
# createVisualizationColors.ts.
GRAFANA = {'green': '#73BF69', 'red': '#F2495C', 'purple': '#B877D9', 'orange': '#FF9830',
           'blue': '#5794F2', 'yellow': '#FADE2A'}


def ok(cond, name, why=''):
    global n_test
    n_test += 1
    print(('ok %d - %s' if cond else 'not ok %d - %s') % (n_test, name))
    if not cond and why:
        for line in str(why).splitlines():
            print('#   ' + line)
    sys.stdout.flush()
    return cond


def get(path):
    with urllib.request.urlopen(BASE + path, timeout=10) as r:
        return r.status, dict(r.headers), r.read().decode()


def api():
    return json.loads(get('api/v1/topdown?scope=core&level=2')[2])


def words(name):
    return name.replace('_', ' ')


def bottleneck_text(f):
    """What the page must say for fractions @f: the largest level-1
    category but retiring, then its largest child, with the child's share
    (which same_bottleneck compares within half a point: PERF_METRICS
    gives each fraction in 1/255ths)."""
    l1 = {k: v for k, v in f.items() if k in ('bad_speculation', 'frontend_bound', 'backend_bound')}
    parent = max(l1, key=l1.get)
    children = {'bad_speculation': ('branch_mispredicts', 'machine_clears'),
                'frontend_bound': ('fetch_latency', 'fetch_bandwidth'),
                'backend_bound': ('memory_bound', 'core_bound')}[parent]
    child = max(children, key=lambda c: f[c])
    return 'Bottleneck: %s \u2192 %s, %.1f %%' % (words(parent), words(child), 100 * f[child])


def browser(js=True, width=1280, height=1800):
    o = Options()
    for a in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
              '--no-first-run', '--disable-background-networking', '--disable-extensions',
              '--window-size=%d,%d' % (width, height)):
        o.add_argument(a)
    if not js:
        o.add_experimental_option('prefs', {'profile.managed_default_content_settings.javascript': 2})
    o.set_capability('goog:loggingPrefs', {'browser': 'ALL', 'performance': 'ALL'})
    return webdriver.Chrome(service=Service('/usr/bin/chromedriver'), options=o)


def bar_widths(d, entity):
    """Each category's share of its entity's bar as drawn: the rendered
    width of its rectangle over the bar's."""
    return d.execute_script('''
        const svg = document.querySelector('#e-' + arguments[0] + ' svg.tree');
        if (!svg) return null;
        const w = svg.getBoundingClientRect().width, out = {};
        for (const r of svg.querySelectorAll('rect'))
            out[r.dataset.cat] = r.getBoundingClientRect().width / w;
        return out;''', entity)


def compare(drawn, want, tol=0.01):
    """The categories whose drawn share is off by more than @tol of the bar."""
    if drawn is None:
        return ['no bar']
    bad = ['%s: drawn %.4f, expected %.4f' % (k, drawn.get(k, -1), v)
           for k, v in want.items() if abs(drawn.get(k, -1) - v) > tol]
    bad += ['%s drawn but not expected' % k for k in drawn if k not in want]
    return bad


def expected_of(entity_doc):
    want = dict(entity_doc['level1'])
    want.update(entity_doc.get('level2') or {})
    return want


def bar_errors(d, doc):
    """Host and packages drawn against the JSON document @doc."""
    bad = []
    for ent, e in [('host', doc['host'])] + [('package-%d' % p['package'], p) for p in doc['packages']]:
        bad += ['%s: %s' % (ent, b) for b in compare(bar_widths(d, ent), expected_of(e))]
    return bad


def check_bars(d, doc, label):
    bad = bar_errors(d, doc)
    ok(not bad, label, '\n'.join(bad))


def same_bottleneck(got, want):
    g = re.fullmatch(r'(.*), ([0-9.]+) %', got or '')
    w = re.fullmatch(r'(.*), ([0-9.]+) %', want)
    return bool(g) and g.group(1) == w.group(1) and abs(float(g.group(2)) - float(w.group(2))) <= 0.5


def host_bneck(d):
    try:
        return d.find_element(By.CSS_SELECTOR, '#e-host p.bneck').text
    except WebDriverException:
        return ''


def history_extent(d):
    """The host chart's areas: the leftmost and rightmost x drawn, in the
    chart's 1000 units."""
    ds = d.execute_script('''
        return Array.from(document.querySelectorAll('#h-host svg.hist path')).map(p => p.getAttribute('d'));''')
    xs = [float(m) for path in ds for m in re.findall(r'[ML]([0-9.]+) ', path)]
    return (min(xs), max(xs)) if xs else (0, 0)


def severe_logs(d):
    return [e for e in d.get_log('browser') if e['level'] in ('SEVERE', 'WARNING')]


perf_log = []


def network(d):
    """Chrome's network events of the page so far (the log is read once)."""
    for e in d.get_log('performance'):
        perf_log.append(json.loads(e['message'])['message'])
    return perf_log


def requests(d):
    return [m['params']['request']['url'] for m in network(d) if m['method'] == 'Network.requestWillBeSent']


def drawn_docs(d):
    """The last two core-scope documents the page's script received (the
    newest may not be drawn yet: the script fetches the history before it
    draws): what its bars must show."""
    ids = [m['params']['requestId'] for m in network(d) if m['method'] == 'Network.loadingFinished']
    done = set(ids)
    urls = [(m['params']['requestId'], m['params']['request']['url']) for m in perf_log
            if m['method'] == 'Network.requestWillBeSent']
    docs = []
    for rid, url in urls:
        if rid in done and 'api/v1/topdown?scope=core' in url:
            docs.append(rid)
    out = []
    for rid in docs[-2:]:
        body = d.execute_cdp_cmd('Network.getResponseBody', {'requestId': rid})
        text = base64.b64decode(body['body']).decode() if body.get('base64Encoded') else body['body']
        out.append(json.loads(text))
    return out


def check_drawn(d, label):
    """The bars against the document the page drew (the newest of the last
    two that matches)."""
    why = []
    for doc in reversed(drawn_docs(d)):
        bad = bar_errors(d, doc)
        if not bad:
            return ok(True, label)
        why.append('interval %d: %s' % (doc['intervals'], '; '.join(bad)))
    return ok(False, label, '\n'.join(why) or 'no document fetched')


def wait_for(fn, seconds):
    end = time.time() + seconds
    while time.time() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.1)
    return fn()


def words_of(e):
    """The bottleneck the page must name for an entity of the JSON API."""
    if not e.get('bottleneck'):
        return 'Bottleneck: none (no slots counted)'
    parent, _, child = e['bottleneck'].partition('.')
    v = e['level2'][child] if child else e['level1'][parent]
    return 'Bottleneck: %s%s, %.1f %%' % (words(parent), ' \u2192 ' + words(child) if child else '', 100 * v)


def smoke():
    """Another machine's page after the script's first redraw: its bars
    and bottleneck are the JSON document's, and nothing went wrong."""
    d = browser()
    try:
        d.get(BASE)
        first = d.find_element(By.ID, 'when').text
        wait_for(lambda: d.find_element(By.ID, 'when').text != first, 10)
        docs = wait_for(lambda: drawn_docs(d), 10) or [api()]
        if docs[-1]['host'].get('level1'):
            check_drawn(d, '%s: the bars are the JSON document\'s within 1 %%' % NAME)
        else:
            ok(bar_widths(d, 'host') is None, '%s: no bars without slots' % NAME)

        # The words are those of a document the page received: on a loaded
        # machine the newest interval may be drawn a moment after it came.
        def named():
            got = host_bneck(d)
            return any(same_bottleneck(got, w) or got == w
                       for w in (words_of(doc['host']) for doc in drawn_docs(d)))
        ok(wait_for(named, 10), '%s: the bottleneck in words' % NAME,
           'got %r, expected one of %r' % (host_bneck(d), [words_of(x['host']) for x in drawn_docs(d)]))
        d.save_screenshot('%s/live-page-%s.png' % (OUTDIR, NAME))
        errors = severe_logs(d)
        ok(not errors, '%s: no console errors or warnings' % NAME,
           '\n'.join(e['message'] for e in errors))
    finally:
        d.quit()


if SMOKE:
    smoke()
    sys.exit(0)

a, b = truths['a'], truths['b']

# ---- the page as served: headers, and the policy's hashes ----
status, headers, html = get('')
ok(status == 200 and headers.get('Content-Type') == 'text/html; charset=utf-8', 'GET /: 200 text/html')
csp = headers.get('Content-Security-Policy', '')
style = re.search(r'<style>(.*?)</style>', html, re.S).group(1)
script = re.search(r'<script>(.*?)</script>', html, re.S).group(1)
sha = lambda t: "'sha256-%s'" % base64.b64encode(hashlib.sha256(t.encode()).digest()).decode()
ok(csp == ("default-src 'none'; style-src %s; script-src %s; connect-src 'self'; img-src data:; "
           "form-action 'self'; base-uri 'none'; frame-ancestors 'none'" % (sha(style), sha(script))),
   'the Content-Security-Policy allows the inline style and script by hash, and nothing else', csp)
external = re.findall(r'''(?:src|href|action)\s*=\s*["']?(?:[a-z]+:)?//[^"' >]*''', html, re.I)
ok(not external, 'the markup references nothing outside the daemon', external)

# ---- without JavaScript: the server's rendering ----
d = browser(js=False)
try:
    d.get(BASE)
    doc = api()
    check_bars(d, doc, 'without JavaScript: the bars are the JSON document\'s within 1 %')
    ok(compare(bar_widths(d, 'host'), a) == [],
       'without JavaScript: the host\'s bars are phase a\'s truth within 1 %', compare(bar_widths(d, 'host'), a))
    got = host_bneck(d)
    ok(same_bottleneck(got, bottleneck_text(a)), 'without JavaScript: the bottleneck in words',
       'got %r, expected %r' % (got, bottleneck_text(a)))
    d.get(BASE + '?heat=memory_bound')
    cells = d.execute_script('''return Array.from(document.querySelectorAll('svg.heat rect[data-core]'))
        .map(r => [r.getAttribute('class'), Number(r.getAttribute('fill-opacity'))]);''')
    ok(len(cells) == len(doc['cores']) and all(c == 'c-memory_bound' and abs(v - a['memory_bound']) < 0.01
                                               for c, v in cells),
       'without JavaScript: ?heat=memory_bound draws every core at its memory-bound share', cells)
    d.save_screenshot(OUTDIR + '/live-page-nojs.png')
finally:
    d.quit()

# ---- with JavaScript: live ----
d = browser()
try:
    d.get(BASE)
    first = d.find_element(By.ID, 'when').text
    updated = wait_for(lambda: d.find_element(By.ID, 'when').text != first, 10)
    ok(updated, 'the script redraws the page with the next interval', 'still %r' % first)
    # Phase a holds until this script moves the clock on: its steady figures.
    check_drawn(d, 'with JavaScript: the bars are the JSON document\'s within 1 %')
    got = host_bneck(d)
    ok(same_bottleneck(got, bottleneck_text(a)), 'phase a: the bottleneck in words', 'got %r, expected %r' % (got, bottleneck_text(a)))
    x0 = history_extent(d)

    # The colours are the dashboard's.
    dash = json.load(open(DASHBOARD))
    names = {}
    for panel in dash['panels']:
        for o in panel.get('fieldConfig', {}).get('overrides', []):
            for p in o.get('properties', []):
                if p.get('id') == 'color' and o['matcher']['id'] == 'byName':
                    names[o['matcher']['options']] = p['value']['fixedColor']
    drawn = d.execute_script('''
        const out = {};
        for (const r of document.querySelectorAll('#e-host svg.tree rect:not(.l2)'))
            out[r.dataset.cat] = getComputedStyle(r).fill;
        return out;''')
    hexrgb = lambda h: 'rgb(%d, %d, %d)' % tuple(int(h[i:i + 2], 16) for i in (1, 3, 5))
    wrong = ['%s: %s, dashboard %s (%s)' % (c, f, names.get(c), GRAFANA.get(names.get(c)))
             for c, f in drawn.items() if hexrgb(GRAFANA.get(names.get(c), '#000000')) != f]
    ok(drawn and not wrong, 'each level-1 category has the Grafana dashboard\'s colour', wrong or drawn)

    # The heatmap follows the select.
    Select(d.find_element(By.ID, 'heat')).select_by_value('fetch_latency')
    cells = d.execute_script('''return Array.from(document.querySelectorAll('svg.heat rect[data-core]'))
        .map(r => [r.getAttribute('class'), Number(r.getAttribute('fill-opacity'))]);''')
    doc = api()
    want = sorted(c['level2']['fetch_latency'] for c in doc['cores'])
    ok(len(cells) == len(doc['cores']) and all(c == 'c-fetch_latency' for c, _ in cells) and
       all(abs(x - y) < 0.01 for x, y in zip(sorted(v for _, v in cells), want)) and
       'heat=fetch_latency' in d.current_url,
       'choosing fetch latency redraws the heatmap with the cores\' shares (and the address keeps it)',
       '%s vs %s, %s' % (cells, want, d.current_url))

    # Which threads ran (the SMT split): its heatmap, each core's share of
    # its last interval with both threads running.
    Select(d.find_element(By.ID, 'heat')).select_by_value('smt_both')
    cells = d.execute_script('''return Array.from(document.querySelectorAll('svg.heat rect[data-core]'))
        .map(r => [r.getAttribute('class'), Number(r.getAttribute('fill-opacity'))]);''')
    doc = api()
    want = sorted(c['smt']['last']['both'] for c in doc['cores'])
    ok(len(cells) == len(doc['cores']) and all(c == 'c-smt_both' for c, _ in cells) and
       all(abs(x - y) < 0.01 for x, y in zip(sorted(v for _, v in cells), want)) and
       all(abs(v - 0.6) < 0.01 for v in want) and 'heat=smt_both' in d.current_url,
       'choosing both threads running draws each core\'s SMT split (0.6 of the time, the scenario\'s)',
       '%s vs %s, %s' % (cells, want, d.current_url))
    Select(d.find_element(By.ID, 'heat')).select_by_value('fetch_latency')

    # Phase b: the fake PMU's clock moved on to it now.
    with open(truths['clock'] + '.jump.tmp', 'w') as f:
        f.write('%f\n' % truths['b_at'])
    os.rename(truths['clock'] + '.jump.tmp', truths['clock'] + '.jump')
    got = wait_for(lambda: same_bottleneck(host_bneck(d), bottleneck_text(b)) and host_bneck(d), 30)
    ok(same_bottleneck(got, bottleneck_text(b)), 'phase b: the bottleneck in words changes with it',
       'got %r, expected %r' % (host_bneck(d), bottleneck_text(b)))
    wait_for(lambda: compare(bar_widths(d, 'host'), b) == [], 10)
    ok(compare(bar_widths(d, 'host'), b) == [], 'phase b: the host\'s bars are its truth within 1 %',
       compare(bar_widths(d, 'host'), b))
    # Two seconds of history more than at phase a (the chart draws 60 s
    # across 1000 units: 33 of them), as they come.
    wait_for(lambda: history_extent(d)[1] - history_extent(d)[0] > x0[1] - x0[0] + 20, 30)
    x1 = history_extent(d)
    ok(x1[1] - x1[0] > x0[1] - x0[0] + 20 and x1[1] > 950,
       'the history grows, up to now (host chart from x=%.1f to %.1f, was %.1f to %.1f)' % (x1 + x0),
       '%s then %s' % (x0, x1))
    d.save_screenshot(OUTDIR + '/live-page.png')
    off = [u for u in requests(d) if not (u.startswith(BASE) or u.startswith('data:'))]
    ok(not off, 'nothing is fetched from outside the daemon', off)
    errors = severe_logs(d)
    ok(not errors, 'no console errors or warnings', '\n'.join(e['message'] for e in errors))
finally:
    d.quit()

# ---- a phone's width ----
d = browser(width=390, height=1600)
try:
    d.get(BASE)
    # Once the page has drawn an interval (its bottleneck named).
    wait_for(lambda: host_bneck(d), 10)
    wide = d.execute_script('return [document.documentElement.scrollWidth, window.innerWidth];')
    ok(wide[0] <= wide[1], 'at a phone\'s width (390 px) nothing scrolls sideways', wide)
    d.save_screenshot(OUTDIR + '/live-page-phone.png')
    errors = severe_logs(d)
    ok(not errors, 'at a phone\'s width: no console errors', '\n'.join(e['message'] for e in errors))
finally:
    d.quit()
