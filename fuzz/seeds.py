#!/usr/bin/env python3
"""fuzz/seeds.py ROOFTUNE -- (re)make the seed corpora fuzz/corpus/TARGET/
from the project's test data, small (the whole corpus stays well under a
megabyte). ROOFTUNE is a built rooftune (build/rooftune): the databases
get their schema from its `db init`. Run from the project root; it
replaces the files it makes (named seed-*) and leaves the others (what
`make fuzz-merge` added) alone.

  t1      data/t1/*.json, every kernel's space (targets/*/*.json but the
          description files, tests/data, search_spaces/examples) with a "#set" line binding
          its problem variables to small sizes, the config target's space,
          and small spaces showing one feature each
  expr    the expressions of tests/data/expr_cases.tsv and every Values
          and Conditions text of the spaces above
  config  configurations of the config target's space, good and bad
  t4      slices of data/t4/pnpoly_RTX_3090_T4.json.gz (a few results),
          plain and gzip, and variants (statuses, units, bad values)
  set     --set texts as the README and the tests write them
  rtdb    rooftune databases with pins, defaults, tags, a WAL-mode one,
          an empty one (512-byte pages to keep them small)
  lookup  rows as rooftune writes them (the rtdb seeds' workloads) and
          lookups exact, nearest, by string variables, with odd texts
  tm      the target description files of targets/*/ (as written and
          compact) and variants missing a member or with a bad one
"""
import glob
import gzip
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.getcwd()
DATE = '2026-12-01 00:00:00'   # every row's date: the seeds do not change when remade
CORPUS = os.path.join(ROOT, 'fuzz', 'corpus')


def out(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, 'seed-' + name), 'wb') as f:
        f.write(data)


def clear(target):
    for f in glob.glob(os.path.join(CORPUS, target, 'seed-*')):
        os.remove(f)


def compact(obj):
    return json.dumps(obj, separators=(',', ':'), ensure_ascii=False)


# ---- t1 ----
SMALL = {'int': '64', 'string': "'nchw'"}
def description_file(path):
    """A target description file (targets/model/tm.h: "rooftune_target"), not a space."""
    with open(path) as f:
        return '"rooftune_target"' in f.read()


SPACE_FILES = sorted(glob.glob('data/t1/*.json') +
                     [f for f in glob.glob('targets/*/*.json') if not description_file(f)] +
                     glob.glob('tests/data/*.json') + glob.glob('search_spaces/examples/*.json'))

FEATURES = {
    # one feature each: conditions and groups, types, comprehensions,
    # duplicates, an empty space, defaults, problem variables
    'groups': {'ConfigurationSpace': {'TuningParameters': [
        {'Name': 'a', 'Type': 'int', 'Values': '[1, 2, 4, 8]'},
        {'Name': 'b', 'Type': 'int', 'Values': 'list(range(1, 9))', 'Default': 2},
        {'Name': 'c', 'Type': 'string', 'Values': "['x', 'y', 'z']"},
        {'Name': 'd', 'Type': 'bool', 'Values': '[False, True]'},
        {'Name': 'e', 'Type': 'float', 'Values': '[0.5, 1, 1.0, 2.5]'}],
        'Conditions': [{'Expression': 'a * b <= 16', 'Parameters': ['a', 'b']},
                       {'Expression': "c != 'y' or d", 'Parameters': ['c', 'd']},
                       {'Expression': 'b % a == 0 or e > 1'}]}},
    'vars': {'ConfigurationSpace': {
        'ProblemVariables': [{'Name': 'N', 'Type': 'int'}, {'Name': 'T', 'Type': 'int', 'Default': 2}],
        'TuningParameters': [
            {'Name': 'tile', 'Type': 'int', 'Values': '[2**i for i in range(8) if 2**i <= N]'},
            {'Name': 'threads', 'Type': 'int', 'Values': 'list(range(1, T + 1))'}],
        'Conditions': [{'Expression': 'N % (tile * threads) == 0'}]}},
    'empty': {'ConfigurationSpace': {'TuningParameters': [
        {'Name': 'a', 'Type': 'int', 'Values': [1, 2, 3]}],
        'Conditions': [{'Expression': '1 > 2'}, {'Expression': 'a > 5'}]}},
    'dups': {'General': {'BenchmarkName': 'dups'}, 'ConfigurationSpace': {'TuningParameters': [
        {'Name': 'a', 'Type': 'int', 'Values': [1, 2, 2, 3, 1], 'Default': [2]},
        {'Name': 's', 'Type': 'str', 'Values': ['p', 'q', 'p'], 'Default': 'r'},
        {'Name': 'a', 'Type': 'int', 'Values': [1, 2, 2, 3, 1], 'Default': [2]}]}},
    'raises': {'ConfigurationSpace': {'TuningParameters': [
        {'Name': 'x', 'Type': 'int', 'Values': 'list(range(-2, 3))'},
        {'Name': 'y', 'Type': 'int', 'Values': '[0, 1, 2]'}],
        'Conditions': [{'Expression': '6 // x > y'}, {'Expression': '[1, 2][y] > 0 or x < 0'}]}},
}


def seeds_t1():
    clear('t1')
    for f in SPACE_FILES:
        d = json.load(open(f))
        need = [v for v in d['ConfigurationSpace'].get('ProblemVariables', []) if 'Default' not in v]
        text = compact(d)
        if need:
            text = '#set ' + ','.join('%s=%s' % (v['Name'], SMALL[v.get('Type', 'int')]) for v in need) + '\n' + text
        out('t1', f.replace('/', '_'), text)
    for name, obj in FEATURES.items():
        out('t1', name + '.json', compact(obj))
    out('t1', 'vars-set.json', '#set N=96,T=3\n' + compact(FEATURES['vars']))
    out('t1', 'config_space.json', CONFIG_SPACE)


# The config target's space (fuzz/fz_config.c: the same text).
CONFIG_SPACE = compact({'ConfigurationSpace': {'TuningParameters': [
    {'Name': 'i', 'Type': 'int', 'Values': '[-3, 0, 1, 2, 2**53 + 1, 9223372036854775807, -9223372036854775808]'},
    {'Name': 'f', 'Type': 'float', 'Values': '[1, 1.0, 2.5, 0.1, 1e300, -0.0, 2.0**53, 2**53 + 1, 5e-324]'},
    {'Name': 's', 'Type': 'string', 'Values': "['a', '', 'a b', 'q\\'\"', 'nul\\x00x', '\\u00e9\\U0001F600', '1']"},
    {'Name': 'b', 'Type': 'bool', 'Values': '[False, True]'}]}})


# ---- expr ----
def seeds_expr():
    clear('expr')
    texts = []
    for line in open('tests/data/expr_cases.tsv', encoding='utf-8'):
        texts.append(line.rstrip('\n').split('\t')[0])
    for f in SPACE_FILES:
        cs = json.load(open(f))['ConfigurationSpace']
        texts += [p['Values'] for p in cs['TuningParameters'] if isinstance(p['Values'], str)]
        texts += [c['Expression'] for c in cs.get('Conditions', [])]
    texts += ['a + b * M // 3', "s * 2 + layout", '[x * a for x in range(M // 100) if x % 2]',
              'sum(i for i in range(a)) > b and t', 'min(a, b, x) < max([M, 1])',
              "(a, s)[0] ** 2 / x", "float(M) == 1024 and int(b) == 2 and bool(layout)"]
    seen = set()
    k = 0
    for t in texts:
        if t in seen:
            continue
        seen.add(t)
        out('expr', '%04d' % k, t)
        k += 1


# ---- config ----
def seeds_config():
    clear('config')
    good = [{'i': 1, 'f': 1, 's': 'a', 'b': True},
            {'i': 9007199254740993, 'f': 1.0, 's': 'a b', 'b': False},
            {'i': -9223372036854775808, 'f': 9007199254740992.0, 's': 'q\'"', 'b': False},
            {'i': 9223372036854775807, 'f': 5e-324, 's': '\u00e9\U0001F600', 'b': True},
            {'b': True, 's': '1', 'f': -0.0, 'i': 2}]
    for k, c in enumerate(good):
        out('config', 'good%d.json' % k, json.dumps(c, ensure_ascii=k % 2 == 0))
    bad = ['{"i":1,"f":1,"s":"a"}', '{"i":1,"f":1,"s":"a","b":true,"x":0}',
           '{"i":1.5,"f":1,"s":"a","b":true}', '{"i":true,"f":1,"s":"a","b":1}',
           '{"i":1,"i":1,"f":1,"s":"a","b":true}', '[1,2]', '{"i":1,"f":1,"s":"nul\\u0000x","b":true}',
           '{"i":1,"f":[1],"s":{"a":1},"b":null}', '{"i":1e400,"f":1,"s":"a","b":true}']
    for k, t in enumerate(bad):
        out('config', 'bad%d.json' % k, t)


# ---- t4 ----
def seeds_t4():
    clear('t4')
    full = json.load(gzip.open('data/t4/pnpoly_RTX_3090_T4.json.gz'))
    res = full['results']
    failed = [r for r in res if r['invalidity'] != 'correct'][:1]

    def doc(results, **meta):
        d = {'schema_version': full.get('schema_version', '1.0.0'),
             'metadata': dict(full['metadata'], **meta), 'results': results}
        return json.dumps(d, indent=1).encode()

    def trim(r):   # keep seeds small: three runtimes
        r = json.loads(json.dumps(r))
        if 'runtimes' in r.get('times', {}):
            r['times']['runtimes'] = r['times']['runtimes'][:3]
        return r

    three = [trim(r) for r in res[:3]]
    out('t4', 'three.json', doc(three))
    out('t4', 'three.json.gz', gzip.compress(doc(three), mtime=0))
    out('t4', 'failed.json', doc([trim(r) for r in failed] + three[:1]))
    out('t4', 'seconds.json', doc(three[:2], timeunit='seconds'))
    odd = trim(res[3])
    odd['times']['runtimes'] = [1.5, 'x', None]
    odd['correctness'] = 0
    out('t4', 'odd.json', doc([odd]))
    nottime = trim(res[4])
    nottime['measurements'] = [{'name': 'power', 'value': 3, 'unit': 'W'}]
    out('t4', 'notime.json', doc([nottime]))
    dup = trim(res[5])
    out('t4', 'duplicate.json', doc([dup, dup]))
    outside = trim(res[6])
    outside['configuration']['block_size_x'] = 33
    out('t4', 'outside.json', doc([outside]))
    out('t4', 'empty.json', doc([]))
    out('t4', 'truncated.json.gz', gzip.compress(doc(three), mtime=0)[:300])


# ---- set ----
def seeds_set():
    clear('set')
    texts = ['M=1024,N=1024,K=1024', "M=1024,N=2**10,layout='nhwc'", 'N=4611686018427387904',
             'M=N=K=2147483648', 'N=1e12', "x=[1,2],y=3", "a=(1,2)", "s='a,b',t=\"c=d\"",
             'M=1024,M=2', '=3', 'M', 'M=', 'v=float("nan"),w=-0.0,b=True', 'N=min(4, 2*3)',
             "l='\\x00'"]
    for k, t in enumerate(texts):
        out('set', '%02d' % k, t)


# ---- rtdb ----
def seeds_rtdb(rooftune):
    clear('rtdb')
    tmp = tempfile.mkdtemp()
    try:
        def fresh(name):
            p = os.path.join(tmp, name)
            subprocess.run([rooftune, 'db', 'init', '--db', p], check=True, capture_output=True)
            return p

        def shrink(p, wal=False):
            h = sqlite3.connect(p)
            h.execute('PRAGMA journal_mode=DELETE')
            h.execute('PRAGMA page_size=512')
            h.execute('VACUUM')
            if wal:
                h.execute('PRAGMA journal_mode=WAL')
            h.close()
            return open(p, 'rb').read()

        out('rtdb', 'empty.db', shrink(fresh('empty.db')))
        p = fresh('pins.db')
        h = sqlite3.connect(p)
        q = h.execute
        q("INSERT INTO targets(id, name, fingerprint, description, created) VALUES"
          "(1,'host','fpA','{}',?1),(2,'host','fpB','{}',?1),(3,'gpu','fpC','{}',?1)", (DATE,))
        q("INSERT INTO kernels(id, name, template_version, default_config) VALUES"
          "(1,'gemm','1','{\"kc\":256,\"mc\":384}'),(2,'transpose','1','{\"t\":0}'),"
          "(3,'conv2d','1','{\"tile\":8}'),(4,'nodefault','1',NULL),"
          "(5,'pnpoly','external','{\"between_method\":1}')")
        q("INSERT INTO spaces(id, spec, hash) VALUES(1,'{}','0')")
        wl = []
        for m in (256, 1024):
            for n in (256, 1024):
                for k in (256, 1024):
                    wl.append((1, 1, 'gemm f32 M=%d N=%d K=%d' % (m, n, k),
                               compact({'M': m, 'N': n, 'K': k}), {'kc': k // 4, 'mc': m // 8}))
        for m, lay in ((128, 'nchw'), (1024, 'nchw'), (128, 'nhwc')):
            wl.append((1, 2, "transpose f32 M=%d layout='%s'" % (m, lay),
                       compact({'M': m, 'layout': lay}), {'t': m + len(lay)}))
        wl.append((3, 5, 'pnpoly f32', '{}', {'between_method': 2}))
        for i, (tid, kid, key, sizes, cfg) in enumerate(wl, 1):
            q("INSERT INTO workloads(id, kernel_id, key, sizes, dtype, layout, hash)"
              " VALUES(?,?,?,?,'f32','',?)", (i, kid, key, sizes, 'h%d' % i))
            q("INSERT INTO campaigns(id, target_id, workload_id, space_id, strategy, options, seed,"
              " budget, rooftune_version, source, compiler, flags, state, started)"
              " VALUES(?,?,?,1,'random','{}',1,2,'0.1.0','measured','cc','-O2','done',?)",
              (i, tid, i, DATE))
            q("INSERT INTO trials(id, campaign_id, config, config_hash, status, time, created)"
              " VALUES(?,?,?,?,'ok',?,'2026-01-01')", (i, i, compact(cfg), 'c%d' % i, 1e-3 * i))
            q("INSERT INTO pins(id, target_id, workload_id, version, trial_id, config, pinned_by, reason,"
              " created) VALUES(?,?,?,1,?,?,'seed','best',?)", (i, tid, i, i, compact(cfg), DATE))
            q("INSERT INTO pin_current VALUES(?,?,?)", (tid, i, i))
        q("INSERT INTO tags(id, name, note, created) VALUES(1,'v1','first',?)", (DATE,))
        q("INSERT INTO tag_pins SELECT 1, pin_id FROM pin_current")
        q("INSERT INTO pins(id, target_id, workload_id, version, trial_id, config, pinned_by, reason,"
          " created) VALUES(100,1,8,2,NULL,'{\"kc\":1,\"mc\":2}','seed','newer',?)", (DATE,))
        q("UPDATE pin_current SET pin_id = 100 WHERE workload_id = 8")
        h.commit()
        h.close()
        check = subprocess.run([rooftune, 'db', 'check', '--db', p], capture_output=True, text=True)
        if check.returncode:
            sys.exit('seeds.py: the pins seed fails db check:\n' + check.stdout + check.stderr)
        out('rtdb', 'pins.db', shrink(p))
        out('rtdb', 'pins-wal.db', shrink(p, wal=True))
        h = sqlite3.connect(p)
        h.execute('PRAGMA journal_mode=DELETE')
        h.execute('PRAGMA user_version=3')
        h.close()
        out('rtdb', 'pins-v3.db', shrink(p))
    finally:
        for f in glob.glob(os.path.join(tmp, '*')):
            os.remove(f)
        os.rmdir(tmp)


# ---- lookup ----
def seeds_lookup():
    clear('lookup')

    def rows(ws):
        return ''.join('%s\t%s\t%s\t%s\t%s\n' % w for w in ws)
    gemm = [('gemm f32 M=%d N=%d K=%d' % (m, n, k), compact({'M': m, 'N': n, 'K': k}), 'f32',
             compact({'kc': k // 4, 'mc': m // 8}), '%g' % (1e-3 * m))
            for m in (256, 1024) for n in (256, 1024) for k in (256, 1024)]
    trans = [("transpose f32 M=%d layout='%s'" % (m, l), compact({'M': m, 'layout': l}), 'f32',
              compact({'t': m}), '0.5') for m, l in ((128, 'nchw'), (1024, 'nchw'), (128, 'nhwc'))]
    default = '{"kc":256,"mc":384}'
    cases = [('M=1024,N=1024,K=1024', default, gemm), ('M=300 N=3000 K=30', default, gemm),
             ("K=512,M=256,N=2048.0,dtype='f32'", '', gemm), ('M=0,N=1,K=1', default, gemm),
             ('M=1000,layout=nchw', default, trans), ("M=1000,layout='nhwc'", '', trans),
             ('N=1', default, []),
             ('M=1e999,N=-inf,K=nan', default, gemm[:2]),
             ('M=1', default, [('k', '{"M":1,"x":[1,{"a":"]"}],"s":"\\u00e9\\"","n":null,"b":true}',
                                'f32', '{}', 'x')]),
             ('M=1', '[]', [('k', '{}', '', '', ''), ('k', '{}', 'f32', '{}', '1'), ('', 'not json', 'f32', '{', '-1')])]
    for k, (vars_, d, ws) in enumerate(cases):
        out('lookup', '%02d' % k, vars_ + '\n' + d + '\n' + rows(ws))


# ---- tm ----
def seeds_tm():
    clear('tm')
    for path in sorted(f for f in glob.glob('targets/*/*.json') if description_file(f)):
        with open(path) as f:
            text = f.read()
        out('tm', os.path.basename(path), text)
        j = json.loads(text)
        out('tm', 'compact-' + os.path.basename(path), compact(j))
    j = json.loads(open('targets/model/h200.json').read())
    bad = []
    for member in ('rooftune_target', 'ceilings', 'provenance'):
        k = dict(j)
        del k[member]
        bad.append(k)
    k = dict(j); k['borrows'] = 'model'; bad.append(k)
    k = dict(j); k['limits'] = {'x': 0}; bad.append(k)
    k = dict(j); k['provenance'] = {'ceilings': 'x', 'nope': 'y'}; bad.append(k)
    k = dict(j); k['describe'] = {'a': 1}; bad.append(k)
    for n, k in enumerate(bad):
        out('tm', 'bad%d.json' % n, compact(k))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    seeds_t1()
    seeds_expr()
    seeds_config()
    seeds_t4()
    seeds_set()
    seeds_rtdb(os.path.abspath(sys.argv[1]))
    seeds_lookup()
    seeds_tm()
    total = sum(os.path.getsize(f) for f in glob.glob(os.path.join(CORPUS, '*', '*')))
    print('fuzz/corpus: %d files, %d bytes' % (len(glob.glob(os.path.join(CORPUS, '*', '*'))), total))


if __name__ == '__main__':
    main()
