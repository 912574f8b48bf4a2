#!/usr/bin/env python3
"""Generate tests/data/expr_cases.tsv, the golden cases of the space-expression
language (search_spaces/sx.h): every expression below is evaluated with real
Python `eval` and written as `expression<TAB>expected`, where expected is
repr() of the result, or RAISES when Python raises, returns a complex number,
or returns an int outside int64 (rooftune's documented OverflowError).
DEVIATIONS lists the few cases where rooftune raises by design although
Python does not. Run from anywhere: python3 tests/gen_expr_cases.py
"""
import builtins
import os
import warnings

INT64 = (-2**63, 2**63 - 1)

# The builtins the language has; nothing else is reachable from a case.
BUILTINS = {name: getattr(builtins, name) for name in (
    'range', 'list', 'len', 'min', 'max', 'abs', 'int', 'float', 'bool', 'sum')}

CASES = [
    # --- literals
    '0', '00', '42', '9223372036854775807', '9223372036854775808',
    '-9223372036854775808', '0x10', '0X1f', '0xff_ff', '0x_ff', '0o17', '0b101',
    '0B1_0', '1_000', '1_000_000 * 2', '1.5e3', '1e3', '1E-2', '.5', '5.', '1_0.5e1_0',
    '0.1', '1.0', '1e400', 'True', 'False', 'None', "''", '""', "'abc'", '"abc"',
    "'a' 'b'", '"x" \'y\' "z"', "r'\\n'", "u'x'", "'''tri'''", "'it\\'s'",
    '"say \\"hi\\""', '"both \' and \\""', "'a\\tb'", "'a\\\\b'", "'\\x41'",
    "'\\101'", "'line\\nbreak'", "'\\x00'", "'\\x7f'", "'\\u0041'", "'\\d'",
    "'cr\\r'", "'bell\\a'",
    # --- tuples and lists
    '(1,)', '(1, 2)', '()', '(1)', '((1, 2),)', "(1, 'a', 2.5, None, True)",
    "[1, (2, 3), [4]]", '[]', '[1,]', '1, 2', '(1, 2,)', '[[]]',
    # --- arithmetic, precedence
    '2 + 3 * 4', '(2 + 3) * 4', '10 - 2 - 3', '100 / 10 / 5', '2 ** 3 ** 2',
    '-2 ** 2', '(-2) ** 2', '2 ** -1', '-2 ** -2', '2 * -3', '- - 3', '+-3',
    '~1 ** 2', '1 << 2 + 1', '1 | 2 ^ 3 & 4', '2 ** 2 ** -1', '7 - -7',
    '1 + 2 * 3 - 4 / 2', '2 * 3 % 4', '17 % 5 * 3', '-3 * -3', '+True',
    # --- true division
    '7 / 2', '-7 / 2', '1 / 3', '2 / 3', '0 / 5', '0 / -5', '1 / 0', '1.0 / 0',
    '0.0 / 0.0', '9007199254740993 / 1', '10 / 4', '-1 / 3', '1e308 / 1e-10',
    # --- floor division and modulo, ints
    '-7 // 2', '7 // -2', '-7 // -2', '7 // 2', '-7 % 2', '7 % -2', '-7 % -2',
    '7 % 2', '0 % 5', '0 // -5', '-1 // 10', '-1 % 10', '1 // 0', '1 % 0',
    '(-9223372036854775807 - 1) // -1', '(-9223372036854775807 - 1) % -1',
    '(-9223372036854775807 - 1) // 2', '(-9223372036854775807 - 1) % 3',
    '9223372036854775807 // -1', '-6 // 3', '-6 % 3', '6 % -3', 'True // 2',
    'True % 2', '5 // True',
    # --- floor division and modulo, floats
    '7.5 % -2', '-7.5 // 2', '-7.5 % 2', '7.5 // -2', '7.5 // 2', '7.5 % 2',
    '-0.0 // 1', '0.0 // -1', '-0.0 % 1', '0.0 % -1', '5 % -0.0', '5.0 // 0',
    '5.0 % 0', '1e300 % 3', "5.0 % float('inf')", "-5.0 % float('inf')",
    "-5.0 // float('inf')", "5.0 // float('inf')", "float('inf') // 1",
    "float('inf') % 1", '7 % 2.5', '-7 // 2.5', '0.5 // 0.1', '1 % 0.1',
    '-1e-300 % 1', '3.0 // -0.5', '-3 % 0.7',
    # --- power
    '2 ** 10', '2 ** 0', '0 ** 0', '0 ** 5', '0 ** -1', '0.0 ** -1', '(-2) ** 3',
    '(-2) ** -1', '2 ** 62', '2 ** 63', '(-2) ** 63', '(-2) ** 64', '10 ** 18',
    '10 ** 19', '3 ** 39', '3 ** 40', '1 ** 1000000', '(-1) ** 1000001',
    '2 ** 0.5', '4 ** 0.5', '2.0 ** 0.5', '(-8) ** 0.5', '(-8) ** (1/3)',
    '(-8.0) ** 3', '(-8.0) ** 2.0', '0.0 ** 0', '(-0.0) ** 3', '10.0 ** 400',
    '10.0 ** -400', '2 ** -1074', '2 ** -1075', "float('inf') ** 0",
    "float('nan') ** 0", "1 ** float('nan')", "2 ** float('inf')",
    "0.5 ** float('inf')", "(-2) ** float('-inf')", "float('-inf') ** 3",
    "float('-inf') ** -3", 'True ** 2', '2 ** True', '(-1) ** -2',
    # --- overflow
    '9223372036854775807 + 1', '-9223372036854775807 - 1', '-9223372036854775807 - 2',
    '9223372036854775807 * 2', '4611686018427387904 * 2', '-4611686018427387904 * 2',
    '3037000499 * 3037000499', '3037000500 * 3037000500', 'abs(-9223372036854775807 - 1)',
    '-(-9223372036854775807 - 1)', '1 << 62', '1 << 63', '-1 << 63', '1 << 64',
    '0 << 100', '3 << 61', '-3 << 61', 'int(1e19)', 'int(-9.2e18)', 'int(1e18)',
    # --- shifts and bitwise
    '5 >> 1', '-5 >> 1', '-1 >> 100', '1 >> 100', '1 << -1', '1 >> -1',
    '1.0 << 1', '6 & 3', '6 | 3', '6 ^ 3', '~5', '~-1', '-6 & 3', '-6 | 3',
    '-6 ^ 3', 'True & False', 'True | False', 'True ^ True', 'True & 1', 'False | 2',
    '1 & 1.0', '~True', '~1.5',
    # --- int and float mixing, bools as ints
    '1 + 2.5', '2.5 + 1', '3 * 1.5', '10 - 0.5', 'True + True', 'True * 3',
    'True / 2', 'False - 1', '-True', '1 + True', 'True + 1.5', '0.1 + 0.2',
    '0.1 * 3', '1e16 + 1', '2 ** 53 + 1.0', '1e300 * 1e10', '-1e300 * 1e10',
    '1e300 * 1e10 - 1e300 * 1e10', "float('inf') * 0", "-float('inf')",
    '123456789 * 1000.0', '0.0 * -1', '-0.0 + 0.0', '-0.0 - 0.0', '-0.0',
    "1 + 'a'", "'a' + 1", '[1] + (1,)', '(1,) + [1]', '[1] + 1', '1 + None',
    # --- float repr
    '1e16', '1e15', '1e-5', '0.0001', '0.00001', '1.5e-10', '5e-324',
    '1.7976931348623157e308', '123.456', '1e22', '1 / 7',
    '123456789012345680.0', '0.1 + 0.7', '100.0', '1e-7', '-2.5e-3',
    "float('nan')", '9007199254740993.0', '1.0 / 3 * 3',
    # --- comparisons
    '1 < 2', '2 < 1', '1 <= 1', '1 > 1', '1 >= 1', '1 == 1', '1 != 1', '1 == 1.0',
    '1 != 1.0', "1 == '1'", "1 != '1'", "1 < 'a'", "'a' < 1", '1 < None',
    'None == None', 'None == 0', 'None != None', 'True == 1', 'False == 0',
    'True == 1.0', '2 == 2.5', '3 > 2.5', '2.5 >= 3', "float('nan') == float('nan')",
    "float('nan') != float('nan')", "float('nan') < 1", "1 < float('inf')",
    "9223372036854775807 < float('inf')", '9007199254740993 == 9007199254740992.0',
    '9007199254740993 > 9007199254740992.0', '9007199254740992 == 9007199254740992.0',
    '9223372036854775807 == 9.223372036854775807e18',
    '9223372036854775807 < 9.223372036854775807e18',
    '-9223372036854775807 - 1 == -9.223372036854775808e18',
    "'abc' == 'abc'", "'a' == 'A'", "'a' < 'b'", "'abc' < 'abd'", "'ab' < 'abc'",
    "'B' < 'a'", "'' < 'a'", "'b' > 'abc'", "'a' <= 'a'",
    '[1, 2] == [1, 2]', '[1, 2] == (1, 2)', '(1, 2) == (1, 2)', '[1, 2] != [2, 1]',
    '[1, 2] < [1, 3]', '[1, 2] < [1, 2, 0]', '(1, 2) < (1,)', '[1] < (1,)',
    "[1, 'a'] < [1, 2]", "[1, 'a'] < [2, 'b']", '[] < [1]', '[] == []',
    '() == ()', '[] == ()', '[1, [2, 3]] == [1, [2, 3]]', '(1, (2,)) < (1, (3,))',
    '[1.0, 2] == [1, 2.0]', '[2] > [1, 5]', '[[2]] < [[1, 5]]', '(1, 2) >= (1, 2)',
    # --- chained comparisons
    '1 < 2 < 3', '1 < 3 < 2', '3 > 2 > 1', '1 < 2 > 0', '1 == 1 == 1',
    '1 == 1 != 2', '32 <= 4*8 <= 1024', '32 <= 4*4 <= 1024', '1 < 0 < 1/0',
    '0 < 1 < 1/0', "1 < 2 < 'a'", '1 < 2 < 3 < 4 < 5', '1 < 2 < 3 < 2 < 5',
    "'a' < 'b' < 'c'", '5 > 3 == 3 >= 2', '1 < 2 in [2]', '2 in [2] in [[2]]',
    # --- membership
    '2 in [1, 2, 3]', '4 not in [1, 2]', '4 in [1, 2]', '1.0 in [1]', "'a' in ['a', 'b']",
    '[1] in [[1], [2]]', '1 in (1,)', '1 in ()', "'ab' in 'cabd'", "'ba' in 'cabd'",
    "'' in 'abc'", "'' in ''", "'abc' in 'abc'", "1 in 'abc'", "'a' in 1",
    '1 in range(5)', '5 in range(5)', '3 not in range(0, 10, 2)', 'True in [1]',
    "'a' not in 'xyz'", 'None in [None]', '[] in [[]]', '(1, 2) in [(1, 2)]',
    '(1, 2) in [[1, 2]]', 'not 1 in [2]',
    # --- boolean operators, short-circuit
    '0 and 1/0', '1 or 1/0', '1/0 and 0', '1 and 1/0', '0 or 1/0', '[] or 5',
    '3 and \'x\'', 'None or 0', "'' or 'default'", '[] and 5', '0.0 or 0',
    '1 < 2 or 1/0', '1 > 2 and 1/0', '1 and 2 and 3', '1 and 0 and 3',
    '0 or 0 or 7', '0 or [] or ()', 'not 1', 'not 0', 'not []', 'not [0]', "not ''",
    'not 0.0', 'not None', 'not ()', 'not not 0', 'not 1 == 2', '1 + 2 == 3 and 4 > 3',
    'not 1 and 1/0', 'True and False or True', 'False or True and False',
    # --- conditional expressions
    "'yes' if 1 < 2 else 'no'", '1 if 0 else 2 if 0 else 3', '1/0 if 0 else 5',
    '5 if 1 else 1/0', '(1 if 1 else 2) + 1', '1 + 1 if 0 else 5', '1 if [] else 2',
    '[1 if x % 2 else 0 for x in range(4)]', 'None if None else 0',
    # --- list and str operators
    '[1, 2] + [3]', '[1] * 3', '3 * [1, 2]', '[0] * 0', '[1] * -2', '(1, 2) + (3,)',
    '(1,) * 2', '[1, 2] * 2.0', '[[1]] * 2', "'a' + 'b'", "'ab' * 3", "3 * 'ab'",
    "'ab' * 0", "'ab' * -1", "'a' * True", "True * 'ab'", "'a' * 'b'", '[] + []',
    '() * 5', "'%d' * 2", '[1] * [2]', '-[1]', "-'a'", '[1] - [1]',
    # --- subscripts
    "'abc'[1]", "'abc'[-1]", "'abc'[3]", "'abc'[-4]", '[1, 2][-1]', '[1, 2][2]',
    '(1, 2)[5]', '[1][True]', '[1][1.0]', "'a'[1.0]", '(1, 2)[0]', '5[0]',
    '[[1, 2], [3]][0][1]', "['ab', 'cd'][1][0]", 'range(10)[3]', 'range(0, 10, 3)[-1]',
    # --- comprehensions
    '[x * 2 for x in range(5)]', '[x for x in range(10) if x % 3 == 0]',
    '[x * y for x in range(1, 4) for y in range(x)]', "[(x, y) for x in [1, 2] for y in 'ab']",
    '[x for x in range(10) if x > 2 if x < 6]', '[x for x in [[1, 2], [3]] for x in x]',
    '[[i * j for j in range(3)] for i in range(3)]', 'len([1 for i in range(10) for j in range(10)])',
    '[x for x in []]', '[1 / x for x in [1, 0]]', '[1 / x for x in [1, 2]]', '[x for x in 5]',
    "[c + c for c in 'abc']", '[x for x in (3, 2, 1)]', '[1 / 0 for x in []]',
    '[x for x in range(5) if x > 2 for y in range(x) if y < 1]',
    '[y for x in range(3) for y in [x, -x]]', '[[x for x in range(y)] for y in range(3)]',
    '[x for x in range(3) if 1/x]', '[x + 1 for x in [1, 2] if x > 1 or 1/0]',
    'sum([x for x in range(101)])', 'sum(x * x for x in range(10))',
    'max(x % 7 for x in range(20))', "min(len(s) for s in ['ab', 'c'])",
    'list(x for x in range(3))', 'sum(1 for _ in range(0))',
    # --- range
    'range(5)', 'list(range(5))', 'list(range(2, 5))', 'list(range(0, 10, 3))',
    'list(range(10, 0, -3))', 'list(range(5, 0))', 'list(range(0))', 'list(range(-3))',
    'list(range(-5, 5, 2))', 'list(range(5, -5, -2))', 'list(range(True, 3))',
    'range(1, 10, 0)', 'range(1.5)', "range('a')", 'len(range(0, 100, 7))',
    'sum(range(10))', 'max(range(7))', 'min(range(3, 9))',
    'list(range(9223372036854775806, 9223372036854775807))',
    'list(range(-9223372036854775807 - 1, -9223372036854775807 + 1))',
    'list(range(0, -9223372036854775807 - 1, -4611686018427387904))',
    # --- builtins
    "len('')", "len('abc')", 'len([1, 2, 3])', 'len([])', 'len(())', 'len(5)',
    "list((1, 2))", "list('ab')", 'list([])', 'list(5)', 'list()',
    'min(3, 1, 2)', 'max(3, 1, 2)', 'min([4, 2, 8])', "max('hello')", 'min([])',
    "min(1, 'a')", 'max(1, 1.0)', 'max(1.0, 1)', 'min(1, 1.0)', 'min([[2], [1, 5]])',
    'max(2)', 'max(True, 1)', 'min(2.5, 3)', "max('b', 'ab')", 'max((1, 2), (1, 3))',
    "min(float('nan'), 1)", 'max([1, 2], [1, 2, 0])',
    'abs(-3)', 'abs(-3.5)', 'abs(True)', "abs('a')", 'abs(-0.0)', 'abs(0)',
    "abs(float('-inf'))",
    'int(3.9)', 'int(-3.9)', "int('  12 ')", "int('-0')", "int('+5')", "int('1_000')",
    "int('1__0')", "int('1e3')", "int('')", "int(' ')", "int('4.2')",
    "int('9223372036854775807')", "int('-9223372036854775808')", "int('9223372036854775808')",
    "int('007')", "int(float('inf'))", "int(float('nan'))", 'int([1])', 'int()',
    'int(True)', 'int(-0.5)', 'int(2.5e15)',
    'float(3)', "float('1.5e3')", "float('  -2.5  ')", "float('abc')", "float('inf')",
    "float('-Infinity')", "float('nAn')", "float('1_0.5')", "float('1__0')", 'float()',
    'float([1])', 'float(True)', "float('.5')", "float('5.')", "float('.')",
    "float('1e')", "float('0x10')", "float('-0')", "float('1e-400')", "float('1e400')",
    'float(9007199254740993)',
    'bool(0)', 'bool([])', "bool('a')", 'bool(0.0)', 'bool()', "bool(float('nan'))",
    'bool(None)', 'bool((0,))', 'bool(-1)',
    'sum([1, 2, 3])', 'sum([])', 'sum([1, 2.5])', 'sum((1, 2))', "sum(['a'])",
    'sum([[1]])', 'sum(5)', 'sum([0.5, 0.25])', 'sum([True, True])',
    'sum([9223372036854775807, 1])', "sum('ab')",
    # --- everything together
    'max([len(str_) for str_ in ["a", "bb", "ccc"]]) * 2',
    '[b * t for b in [16, 32, 64] for t in [1, 2] if b * t <= 64]',
    'sum([1 for bx in range(1, 65) for by in range(1, 65) if 32 <= bx * by <= 1024])',
    'min([x for x in range(1, 100) if x * x > 50]) ** 2',
    '1 if 2 ** 10 == 1024 and 3 in range(5) else 0',
    '[int(c) for c in "1234"]', "int('42') + float('0.5')",
    '[2 ** i for i in range(11)]', '[32 * i for i in range(1, 33) if 32 * i <= 1024][-1]',
]

# Python succeeds, rooftune raises by design: an intermediate int outside
# int64, a range longer than rooftune's 10^7 elements.
DEVIATIONS = {
    '-2**63': 'intermediate 2**63 overflows int64',
    '2**64 // 2**60': 'intermediate 2**64 overflows int64',
    '9223372036854775808 - 1': 'the literal itself overflows int64',
    '2**64 > 1': 'intermediate 2**64 overflows int64',
    'len(range(10**8))': 'ranges are lists capped at 10^7 elements',
}


def out_of_model(v):
    """True when v has a value rooftune cannot represent."""
    if isinstance(v, complex):
        return True
    if isinstance(v, int) and not isinstance(v, bool):
        return not INT64[0] <= v <= INT64[1]
    if isinstance(v, (list, tuple)):
        return any(out_of_model(x) for x in v)
    return False


def as_rooftune(v):
    """Python's value as rooftune shows it: range() gives a list."""
    if isinstance(v, range):
        return list(v)
    if isinstance(v, list):
        return [as_rooftune(x) for x in v]
    if isinstance(v, tuple):
        return tuple(as_rooftune(x) for x in v)
    return v


def expected(src):
    if src in DEVIATIONS:
        return 'RAISES'
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            v = eval(src, {'__builtins__': dict(BUILTINS)})
    except Exception:  # any Python exception means "raises"
        return 'RAISES'
    v = as_rooftune(v)
    return 'RAISES' if out_of_model(v) else repr(v)


def main():
    cases = CASES + list(DEVIATIONS)
    assert len(set(cases)) == len(cases), 'duplicate cases'
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, 'data', 'expr_cases.tsv')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w', encoding='ascii', newline='\n') as f:
        for src in cases:
            assert '\t' not in src and '\n' not in src, src
            exp = expected(src)
            assert '\t' not in exp and '\n' not in exp, (src, exp)
            f.write(f'{src}\t{exp}\n')
    print(f'wrote {len(cases)} cases to {path}')


if __name__ == '__main__':
    main()
