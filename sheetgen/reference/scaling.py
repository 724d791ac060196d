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
"""

from __future__ import annotations

import math

from sheetgen.reference.inputs import num_text
from sheetgen.reference.params import params
from sheetgen.scenarios.scenario import Scenario

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
    return {
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
