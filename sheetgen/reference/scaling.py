"""The Scaling sheet: the plan's compute against Chinchilla's compute-optimal model.

Chinchilla's parametric loss, approach 3 (Hoffmann et al. 2022, Training
Compute-Optimal Large Language Models, arXiv:2203.15556, section 3.3, eq. 2, with
the fitted constants E = 1.69, A = 406.4, B = 410.7, alpha = 0.34, beta = 0.28,
all run inputs)::

    L(N, D) = E + A / N^alpha + B / D^beta

N is the model's parameters as the FLOPs sheet's 6N counts them
(``params_active``: every parameter a token passes through, embeddings included;
the total for a dense model), D the plan's training tokens (``train_tokens`` =
dataset_tokens x epochs).  The plan's budget is C = 6 N D.  Minimising L under
C = 6 N D has the closed form (eq. 4; Appendix D.2)::

    G = (alpha A / (beta B))^(1 / (alpha + beta))
    a = beta / (alpha + beta),  b = alpha / (alpha + beta)
    N_opt = G (C / 6)^a,        D_opt = G^-1 (C / 6)^b

``overtrain_factor`` = D / D_opt.  Beside it the 20-tokens-per-parameter rule
of thumb (D = 20 N, so N = sqrt(C / 120)).  This is approach 3's fit only; it
does not reproduce the paper's Table 3 (approach 1).

The compute-optimal batch size and learning rate (Bi et al. 2024, DeepSeek LLM,
arXiv:2401.02954, section 3.1; the four constants are run inputs)::

    B_opt = 0.2920 C^0.3271 tokens,   eta_opt = 0.3118 C^-0.1250

C is the budget above, 6 N D.  (The paper counts compute as non-embedding FLOPs per
token x tokens, section 3.2; the two differ by a few per cent for these models, which
moves B_opt by a third of that.)  ``batch_vs_opt`` = the scenario's global batch /
B_opt, and ``batch_opt_note`` says it in words.
"""

from __future__ import annotations

import math

from sheetgen.reference.inputs import num_text
from sheetgen.reference.params import params
from sheetgen.scenarios.scenario import Run, Scenario

# Tokens per parameter of the rule of thumb drawn from Hoffmann et al. 2022 (Table 3:
# about 20 tokens per parameter at each compute-optimal size).
RULE_TOKENS_PER_PARAM = 20


def chinchilla_loss(
    n: float, d: float, e: float, a: float, b: float, alpha: float, beta: float
) -> float:
    """L(N, D) = E + A / N^alpha + B / D^beta (Hoffmann et al. 2022, eq. 2)."""
    return e + a / n**alpha + b / d**beta


def overtrain_note(factor: float) -> str:
    """The over-training factor in words: a note, never an error."""
    if factor >= 1:
        return (
            f"trains {num_text(factor, 1)}x the compute-optimal tokens: a smaller model, "
            "cheaper to serve (a choice, not an error)"
        )
    return (
        f"trains {num_text(factor * 100)}% of the compute-optimal tokens: a larger model than "
        "the optimum for this budget"
    )


def batch_note(batch: float, batch_opt: float) -> str:
    """The scenario's batch against the compute-optimal one, in words (the sheet's
    formula, with ROUND as the spreadsheet writes it)."""
    ratio = batch / batch_opt
    opt = f"the compute-optimal {num_text(batch_opt / 10**6, 1)}M tokens"
    if ratio >= 1:
        return (
            f"the batch is {num_text(ratio, 1)}x {opt}: fewer, larger steps; far above it "
            "each token teaches less"
        )
    return (
        f"the batch is {num_text(ratio * 100)}% of {opt}: more, smaller steps, and fewer "
        "micro-batches per replica; up to the optimum a larger batch often trains faster "
        "(advise searches it)"
    )


def batch_law(run: Run, budget: float) -> dict[str, float | str]:
    """DeepSeek LLM's compute-optimal batch and learning rate for ``budget`` FLOPs."""
    batch_opt = run.deepseek_batch_coef * budget**run.deepseek_batch_exp
    return {
        "batch_opt_tokens": batch_opt,
        "batch_opt_seqs": batch_opt / run.seq_len,
        "lr_opt": run.deepseek_lr_coef * budget ** (-run.deepseek_lr_exp),
        "batch_vs_opt": run.global_batch_tokens / batch_opt,
        "batch_opt_note": batch_note(run.global_batch_tokens, batch_opt),
    }


def scaling(s: Scenario) -> dict[str, float | str]:
    run = s.run
    n = params(s.model)["params_active"]
    d = run.train_tokens
    e, a, b = run.chinchilla_e, run.chinchilla_a, run.chinchilla_b
    alpha, beta = run.chinchilla_alpha, run.chinchilla_beta
    budget = 6 * n * d
    g = (alpha * a / (beta * b)) ** (1 / (alpha + beta))
    exp_n = beta / (alpha + beta)
    exp_d = alpha / (alpha + beta)
    n_opt = g * (budget / 6) ** exp_n
    d_opt = (budget / 6) ** exp_d / g
    loss_plan = chinchilla_loss(n, d, e, a, b, alpha, beta)
    loss_opt = chinchilla_loss(n_opt, d_opt, e, a, b, alpha, beta)
    factor = d / d_opt
    rule_n = math.sqrt(budget / (6 * RULE_TOKENS_PER_PARAM))
    out: dict[str, float | str] = {
        "scaling_params": n,
        "scaling_flops_budget": budget,
        "chinchilla_g": g,
        "chinchilla_exp_params": exp_n,
        "chinchilla_exp_tokens": exp_d,
        "chinchilla_params_opt": n_opt,
        "chinchilla_tokens_opt": d_opt,
        "chinchilla_tokens_per_param_opt": d_opt / n_opt,
        "chinchilla_loss_plan": loss_plan,
        "chinchilla_loss_opt": loss_opt,
        "chinchilla_loss_gap": loss_plan - loss_opt,
        "overtrain_factor": factor,
        "overtrain_note": overtrain_note(factor),
        "rule20_params_opt": rule_n,
        "rule20_tokens_opt": RULE_TOKENS_PER_PARAM * rule_n,
        "rule20_overtrain_factor": d / (RULE_TOKENS_PER_PARAM * n),
    }
    out.update(batch_law(run, budget))
    return out
