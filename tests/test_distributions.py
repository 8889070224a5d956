"""Hahn's §6 processes: the exact DPs against brute-force enumeration written from the rules."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from hardsoft.errors import HardsoftError
from hardsoft.languages import all_words, get_process, process_names
from hardsoft.languages.distributions import DyckProcess, ParityProcess


# ----------------------------------------------------------------------- the rules, by hand
def parity_next(prefix: str, p: float) -> dict[str, float] | None:
    if prefix.count("1") % 2 == 0:
        return {"0": (1 - p) / 2, "1": (1 - p) / 2, "$": p}
    return {"0": 0.5, "1": 0.5, "$": 0.0}


def dyck_next(prefix: str, p: float) -> dict[str, float] | None:
    stack = []
    for ch in prefix:
        if ch in "([":
            stack.append(ch)
        elif not stack or {"(": ")", "[": "]"}[stack.pop()] != ch:
            return None
    d = {"(": p / 2, "[": p / 2, ")": 0.0, "]": 0.0, "$": 0.0}
    if stack:
        d[{"(": ")", "[": "]"}[stack[-1]]] = 1 - p
    else:
        d["$"] = 1 - p
    return d


def joint(word: str, rule, p: float) -> float:
    """P(the process emits `word` as its first symbols), multiplying the rule's probabilities."""
    prob = 1.0
    for t, ch in enumerate(word):
        d = rule(word[:t], p)
        if d is None:
            return 0.0
        prob *= d[ch]
    return prob


def conditioned(n: int, m: int, alphabet: str, rule, p: float) -> dict[str, float]:
    """P(X_{1:n} = x | |X| >= m) by summing over every length-m string extending x."""
    mass: Counter = Counter()
    for z in all_words(alphabet, m):
        mass[z[:n]] += joint(z, rule, p)
    total = sum(mass.values())
    return {x: v / total for x, v in mass.items() if v > 0}


def entropy(values) -> float:
    return -sum(v * math.log(v) for v in values if v > 0)


CASES = [
    (ParityProcess, parity_next, "01", 0.3),
    (ParityProcess, parity_next, "01", 0.8),
    (DyckProcess, dyck_next, "()[]", 0.2),
    (DyckProcess, dyck_next, "()[]", 0.45),
]
SYMS = {"01": ["0", "1", "$"], "()[]": ["(", ")", "[", "]", "$"]}


@pytest.mark.parametrize("cls,rule,alphabet,p", CASES)
@pytest.mark.parametrize("n,m", [(0, 0), (3, 3), (5, 5), (4, 7), (2, 6)])
def test_conditioned_prefix_probability_matches_enumeration(cls, rule, alphabet, p, n, m) -> None:
    proc = cls(p)
    truth = conditioned(n, m, alphabet, rule, p)
    for x in all_words(alphabet, n):
        expected = truth.get(x, 0.0)
        if expected == 0.0 and rule is dyck_next and dyck_next(x, p) is None:
            with pytest.raises(HardsoftError, match="impossible"):
                proc.prefix_probability(x, m)
            continue
        got = proc.prefix_probability(x, m)
        assert got == pytest.approx(expected, rel=1e-10, abs=1e-15), x


@pytest.mark.parametrize("cls,rule,alphabet,p", CASES)
def test_survival_and_next_distributions(cls, rule, alphabet, p) -> None:
    proc = cls(p)
    syms = SYMS[alphabet]
    for n in range(6):
        words = all_words(alphabet, n)
        surv = sum(joint(w, rule, p) for w in words)
        assert math.exp(proc.log_survival(n)) == pytest.approx(surv, rel=1e-12)
    words = [w for w in all_words(alphabet, 5) if rule(w, p) is not None]
    mat = proc.next_prob_matrix(words, include_empty=True)
    assert mat.shape == (len(words), 6, len(syms))
    for b, w in enumerate(words):
        for t in range(6):
            expected = [rule(w[:t], p)[s] for s in syms]
            assert mat[b, t] == pytest.approx(expected, abs=1e-15)
    assert np.array_equal(proc.next_prob_matrix(words), mat[:, 1:])


@pytest.mark.parametrize("cls,rule,alphabet,p", CASES)
def test_cross_entropies_match_enumeration(cls, rule, alphabet, p) -> None:
    proc = cls(p)
    syms = SYMS[alphabet]
    ns = list(range(8))
    opt = proc.optimal_cross_entropy(ns)
    uni = proc.unigram_cross_entropy(ns)
    for i, n in enumerate(ns):
        probs = conditioned(n, n, alphabet, rule, p)
        exp_opt = sum(q * entropy(rule(x, p).values()) for x, q in probs.items())
        marginal = [sum(q * rule(x, p)[s] for x, q in probs.items()) for s in syms]
        assert opt[i] == pytest.approx(exp_opt, rel=1e-12)
        assert uni[i] == pytest.approx(entropy(marginal), rel=1e-12)
        assert proc.marginal_next(n) == pytest.approx(marginal, abs=1e-14)
        assert uni[i] >= opt[i] - 1e-12


def chi_square_ok(counts: Counter, probs: dict[str, float], draws: int) -> bool:
    """Pearson chi-square at level 0.001, pooling cells with expected count < 5."""
    stat, pooled_obs, pooled_exp, cells = 0.0, 0, 0.0, 0
    for x, q in probs.items():
        e = q * draws
        if e < 5:
            pooled_obs += counts.get(x, 0)
            pooled_exp += e
            continue
        stat += (counts.get(x, 0) - e) ** 2 / e
        cells += 1
    if pooled_exp > 0:
        stat += (pooled_obs - pooled_exp) ** 2 / pooled_exp
        cells += 1
    df = cells - 1
    crit = df * (1 - 2 / (9 * df) + 3.09 * math.sqrt(2 / (9 * df))) ** 3
    return stat < crit


@pytest.mark.parametrize("cls,rule,alphabet,p", CASES)
@pytest.mark.parametrize("n,m", [(6, 6), (4, 8)])
def test_sampler_matches_exact_distribution(cls, rule, alphabet, p, n, m) -> None:
    proc = cls(p)
    draws = 20000
    samples = proc.sample_prefixes(n, draws, np.random.default_rng(11), min_length=m)
    truth = conditioned(n, m, alphabet, rule, p)
    counts = Counter(samples)
    assert set(counts) <= set(truth)
    assert chi_square_ok(counts, truth, draws)
    # E[TV] <= 1/2 sum sqrt(q / N); TV has bounded differences 1/N, so by McDiarmid it exceeds
    # its mean by 3/sqrt(N) with probability <= exp(-18).
    tv = 0.5 * sum(abs(counts.get(x, 0) / draws - q) for x, q in truth.items())
    bound = 0.5 * sum(math.sqrt(q / draws) for q in truth.values()) + 3 / math.sqrt(draws)
    assert tv < bound


def test_dyck_complete_word_probability_is_the_pcfg_product() -> None:
    proc = DyckProcess(0.3)
    p = proc.p
    from hardsoft.languages import get_language

    d2 = get_language("dyck2")
    for n in range(0, 9, 2):
        for w in all_words("()[]", n):
            if not d2.member(w):
                continue
            pairs = n // 2
            lp = proc.log_probability(w) + math.log(proc.next_probs(w)[proc.eos_index])
            assert lp == pytest.approx(pairs * math.log(p / 2) + (pairs + 1) * math.log(1 - p))


def test_parity_closed_form_at_long_lengths() -> None:
    # Given survival, the parity is uniform after >= 1 symbol (a one-line induction), so the
    # optimal cross-entropy is the average of the two state entropies.
    p = 0.2
    q = (1 - p) / 2
    proc = ParityProcess(p)
    ns = [1, 10, 1000, 10000]
    h_even = entropy([q, q, p])
    opt = proc.optimal_cross_entropy(ns)
    assert opt == pytest.approx([(h_even + math.log(2)) / 2] * 4, rel=1e-12)
    marg = [(q + 0.5) / 2, (q + 0.5) / 2, p / 2]
    assert proc.unigram_cross_entropy(ns) == pytest.approx([entropy(marg)] * 4, rel=1e-12)


def test_dyck_long_horizon_is_finite_and_sampler_agrees_with_forward_dp() -> None:
    proc = DyckProcess(0.4)
    ns = [0, 1, 100, 10000]
    opt = proc.optimal_cross_entropy(ns)
    uni = proc.unigram_cross_entropy(ns)
    assert np.isfinite(opt).all() and np.isfinite(uni).all()
    assert opt == pytest.approx([entropy([0.2, 0.2, 0.6])] * 4)
    assert math.isfinite(proc.log_survival(10000)) and proc.log_survival(10000) < -100
    # heights of sampled prefixes vs the forward DP's height distribution
    n, draws = 300, 4000
    samples = proc.sample_prefixes(n, draws, np.random.default_rng(3))
    heights = np.array([w.count("(") + w.count("[") - w.count(")") - w.count("]") for w in samples])
    pi = proc.state_distribution(n)
    mean = float(np.arange(len(pi)) @ pi)
    sd = math.sqrt(float((np.arange(len(pi)) - mean) ** 2 @ pi))
    assert abs(heights.mean() - mean) < 4 * sd / math.sqrt(draws)
    for w in samples[:50]:
        assert math.isfinite(proc.log_prefix_probability(w))


def test_parameter_validation_and_errors() -> None:
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(HardsoftError, match="0 < p < 1"):
            ParityProcess(bad)
    for bad in (0.0, 0.5, 0.7):
        with pytest.raises(HardsoftError, match="1/2"):
            DyckProcess(bad)
    with pytest.raises(HardsoftError, match="unknown symbol 'x'"):
        ParityProcess(0.3).next_probs("01x")
    with pytest.raises(HardsoftError, match="impossible"):
        DyckProcess(0.3).next_probs("(]")
    with pytest.raises(HardsoftError, match="min_length"):
        ParityProcess(0.3).sample_prefixes(5, 2, 0, min_length=3)
    with pytest.raises(HardsoftError, match="unknown process"):
        get_process("nope", 0.3)
    assert set(process_names()) == {"parity-process", "dyck2-process"}


def test_sample_words_are_complete_strings() -> None:
    from hardsoft.languages import get_language

    words = DyckProcess(0.3).sample_words(200, np.random.default_rng(0))
    assert get_language("dyck2").members(words).all()
    lengths = [len(w) for w in words]
    # E|X| = 2 * E[#pairs] = 2 p / (1 - 2p) for the PCFG
    assert abs(np.mean(lengths) - 2 * 0.3 / 0.4) < 4 * np.std(lengths) / math.sqrt(200)
    parity = ParityProcess(0.3).sample_words(200, np.random.default_rng(1))
    assert get_language("parity-even").members(parity).all()


def test_closing_unbalanced_probability_matches_enumeration() -> None:
    proc = DyckProcess(0.35)
    ns = list(range(8))
    got = proc.closing_unbalanced_probability(ns)
    for i, n in enumerate(ns):
        probs = conditioned(n, n, "()[]", dyck_next, proc.p)
        expected = sum(
            q
            for x, q in probs.items()
            if x and x[-1] in ")]" and x.count("(") + x.count("[") > x.count(")") + x.count("]")
        )
        assert got[i] == pytest.approx(expected, abs=1e-14)
    assert proc.hahn_gap_bound([5])[0] == pytest.approx(got[5] * 0.65 * math.log(2))


def test_dyck_batched_matrix_agrees_with_walk_and_rejects_impossible() -> None:
    proc = DyckProcess(0.3)
    words = proc.sample_prefixes(40, 30, np.random.default_rng(9))
    mat = proc.next_prob_matrix(words, include_empty=True)
    for b, w in enumerate(words):
        for t in range(41):
            expected = dyck_next(w[:t], proc.p)
            assert mat[b, t] == pytest.approx([expected[s] for s in SYMS["()[]"]], abs=1e-15)
    with pytest.raises(HardsoftError, match="impossible"):
        proc.next_prob_matrix(["(())", "([)]"])


def test_experiment_quick_run(tmp_path) -> None:
    from hardsoft.experiments import Context
    from hardsoft.experiments.hahn_processes import run

    result = run(Context(quick=True, figures_dir=tmp_path))
    assert (tmp_path / result.figures[0]).stat().st_size > 10_000
    assert result.metrics["mc_max_z"] < 4.5
    parity, dyck = result.tables
    assert all(row[2] >= row[1] - 1e-12 for row in parity.rows)  # unigram >= optimal
    # one row per p: the PARITY curves are flat in n (measured), no constant repeated per n
    assert len(parity.rows) == len({row[0] for row in parity.rows})
    assert all(float(row[4]) < 1e-9 for row in parity.rows)
    assert all(row[3] > 0 for row in dyck.rows) and "optimum" in dyck.title


@pytest.mark.slow
@pytest.mark.parametrize("p", [0.2, 0.45])
def test_long_horizon_sampler_matches_forward_dp(p: float) -> None:
    # n = 10^4: the sampler (log-space backward DP with checkpoints) against the forward DP's
    # height distribution and P0(n), with 3000 draws.
    proc = DyckProcess(p)
    n, draws = 10000, 3000
    samples = proc.sample_prefixes(n, draws, np.random.default_rng(21))
    heights = np.array([w.count("(") + w.count("[") - w.count(")") - w.count("]") for w in samples])
    pi = proc.state_distribution(n)
    support = np.arange(len(pi))
    mean = float(support @ pi)
    sd = math.sqrt(float((support - mean) ** 2 @ pi))
    assert abs(heights.mean() - mean) < 4 * sd / math.sqrt(draws)
    p0 = proc.closing_unbalanced_probability([n])[0]
    hits = np.mean([w[-1] in ")]" and h > 0 for w, h in zip(samples, heights)])
    assert abs(hits - p0) < 4 * math.sqrt(p0 * (1 - p0) / draws)
