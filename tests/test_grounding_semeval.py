"""Grounding on SemEval2017 (docs/metrics.md §12): extractive predictions are nearly all `present`, the rest
`supported` by their own words (phrases YAKE and FirstPhrases join across punctuation or digits); hand-made
paraphrases of a document are `supported` and unrelated phrases `unsupported`.
"""

from __future__ import annotations

import json

import pytest

from kweval.data import load_dataset
from kweval.evaluation.pipeline import EvalOptions, evaluate
from tests.helpers import SEMEVAL

pytestmark = [pytest.mark.keyphrase, pytest.mark.slow]

# Five documents, each with phrases written by hand: five that paraphrase it (none of them in its text) and five
# that have nothing to do with it.
HAND = {
    "S0003491613001516": (
        [
            "stochastic quantization for complex actions",
            "simulating theories with complex weights",
            "finite density lattice simulations",
            "reliability of complex Langevin results",
            "sign problem workaround",
        ],
        ["coral reef bleaching", "medieval trade routes", "supply chain logistics", "tax evasion", "opera singing"],
    ),
    "S0003491615000433": (
        [
            "equilibration in nuclear collisions",
            "quantum many-body dynamics",
            "laser-driven cluster physics",
            "molecular dynamics with quantum effects",
            "semiclassical approximations of quantum dynamics",
        ],
        ["dairy farming subsidies", "jazz improvisation", "glacier retreat", "football tactics", "wine fermentation"],
    ),
    "S0003491615001505": (
        [
            "deriving relativistic quantum equations",
            "discrete lattice hopping model",
            "continuum limit of the description",
            "logical inference approach to quantum mechanics",
            "Pauli equation derivation",
        ],
        ["election polling", "bird migration", "retail pricing strategy", "earthquake insurance", "ancient pottery"],
    ),
    "S0003491615001839": (
        [
            "mean-field thermodynamics",
            "analytic partition function",
            "critical phenomena in fluids",
            "equation of state of real gases",
            "liquid-gas phase transition model",
        ],
        ["social media marketing", "knee surgery", "rainforest deforestation", "cryptocurrency mining", "soil erosion"],
    ),
    "S0003491615001955": (
        [
            "vacuum energy of fermions",
            "quark confinement model",
            "boundary conditions on quantum fields",
            "zero-point fluctuations",
            "nucleon structure",
        ],
        ["poverty alleviation", "airline scheduling", "children's literature", "urban traffic", "protein folding"],
    ),
}


@pytest.fixture(scope="module")
def files(semeval_extracted):
    """YAKE's and FirstPhrases' top 20 per document of SemEval2017, as --predictions files: `kweval extract`'s output,
    made once a run (the lists `yake_lists` / `firstphrases_lists` give, with their scores)."""
    return {name: semeval_extracted(name) for name in ("yake", "firstphrases")}


@pytest.fixture(scope="module", params=["approx", "stem"])
def extractive(request, files):
    """Those predictions graded under a substring and a stem present rule."""
    dataset = load_dataset(SEMEVAL, predictions=files)
    return evaluate(dataset, EvalOptions(grounding=True, match=request.param, keyphrase=True, present=True))


@pytest.mark.parametrize("model", ["yake", "firstphrases"])
def test_extractive_predictions_are_nearly_all_present_and_none_unsupported(extractive, model):
    scores = extractive.scores[extractive.scores["model"] == model]
    graded = scores["n_grounded"].sum()
    assert graded > 9000
    assert scores["n_grounded_present"].sum() / graded >= (0.97 if extractive.options.match == "approx" else 0.95)
    assert scores["n_unsupported"].sum() == 0
    kw = extractive.keywords
    joined = kw[(kw["model"] == model) & (kw["grounding"] == "supported")]
    assert len(joined) and (joined["support_cosine"].isna().all())  # supported by their own words, no cosine


def test_yake_joins_across_punctuation_are_supported_by_their_words(extractive):
    kw = extractive.keywords
    wales = kw[(kw["model"] == "yake") & (kw["keyword"] == "Wales defects")]
    assert len(wales) and set(wales["grounding"]) <= {"present", "supported"}
    if (wales["grounding"] == "supported").any():  # under a match mode whose words keep "Stone–Wales" whole
        assert wales["support"].str.contains("Stone–Wales defects").all()


def test_hand_made_paraphrases_are_supported_and_unrelated_phrases_unsupported(tmp_path):
    path = tmp_path / "hand.jsonl"
    path.write_text("".join(json.dumps({"id": d, "keyphrases": p + u}) + "\n" for d, (p, u) in HAND.items()))
    ds = load_dataset(SEMEVAL, predictions={"hand": path}).subset(models=["hand"])
    kw = evaluate(ds, EvalOptions(grounding=True)).keywords
    grade = dict(zip(kw["keyword"], kw["grounding"]))
    paraphrases = [x for ps, _ in HAND.values() for x in ps]
    unrelated = [x for _, us in HAND.values() for x in us]
    assert all(grade[u] == "unsupported" for u in unrelated), {u: grade[u] for u in unrelated}
    assert sum(grade[p] == "supported" for p in paraphrases) >= 0.8 * len(paraphrases), {
        p: grade[p] for p in paraphrases
    }
    assert not any(grade[p] == "present" for p in paraphrases)
