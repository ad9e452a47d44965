"""Which reading of each ambiguity a backend took, per operator: what every
report shows of the readings (docs/ambiguities.md, issue #22 item 2).

Each case result holds, per ambiguity in play (`CaseResult.readings`), the
elements where its readings give different values and, per reading (the
marker ``reading:<ambiguity>=<primary>`` for the primary one,
``reading:<ambiguity>:<reading>`` for each other), how many of those
results that reading explains (`judge`).  Summed over an operator's cases
they give one status per ambiguity: "not exercised" (no case told the
readings apart), "took primary", "took <reading>" (it explains every such
result; "took <a> or <b>" where the cases do not tell two readings apart),
"mixed" (no one reading explains them all) or "took none" (every such
element FAILed).  Plain data in, plain records out; the terminal,
report.json and the HTML page all render these.  `in_words` says one in
sentences a newcomer reads (issue #33 item 5): what the doc leaves open,
what the backend did, and that it is accepted, from the spec's words a run
keeps (`results.AmbiguityWords`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dmlconform.results import AmbiguityWords, CaseResult
from dmlconform.spec.model import Spec

PREFIX = "reading:"


@dataclass(frozen=True, slots=True)
class ReadingTaken:
    """One operator's ambiguity: ``elements`` where its readings differ and,
    per reading (the primary first), how many of their results it explains."""

    operator: str
    ambiguity: str
    primary: str
    elements: int
    took: tuple[tuple[str, int], ...]

    @property
    def status(self) -> str:
        """See the module docstring."""
        if not self.elements:
            return "not exercised"
        whole = [r for r, n in self.took if n == self.elements]
        if self.primary in whole:
            return "took primary"
        if whole:
            return "took " + " or ".join(whole)
        return "mixed" if any(n for _, n in self.took) else "took none"

    @property
    def notable(self) -> bool:
        """Whether the backend took anything but the primary reading."""
        return self.status not in ("took primary", "not exercised")

    @property
    def mixed(self) -> bool:
        """Whether no one reading explains the backend's results (`status`
        ``mixed``): it reads the doc one way here, another there."""
        return self.status == "mixed"

    def line(self) -> str:
        """``ACTIVATION_SHRINK nan: took formula (80 elements: propagate 0, formula 80)``."""
        counts = ", ".join(f"{r} {n}" for r, n in self.took)
        return f"{self.operator} {self.ambiguity}: {self.status} ({self.elements} elements: {counts})"

    def to_json(self) -> dict[str, object]:
        """The record as report.json's ``readings`` holds it (docs/report-json.md)."""
        return {"operator": self.operator, "ambiguity": self.ambiguity, "primary": self.primary,
                "elements": self.elements, "status": self.status, "took": [[r, n] for r, n in self.took]}

    @classmethod
    def from_json(cls, item: object) -> ReadingTaken | None:
        """The record `to_json` wrote (``status`` is derived, not read), or
        None where ``item`` is not one."""
        if not isinstance(item, dict) or not isinstance(item.get("took"), list):
            return None
        operator, ambiguity, primary, elements = (item.get(k) for k in ("operator", "ambiguity", "primary", "elements"))
        took = tuple((pair[0], pair[1]) for pair in item["took"] if isinstance(pair, list) and len(pair) == 2
                     and isinstance(pair[0], str) and type(pair[1]) is int)
        if not (isinstance(operator, str) and isinstance(ambiguity, str) and isinstance(primary, str)
                and type(elements) is int and len(took) == len(item["took"])):
            return None
        return cls(operator, ambiguity, primary, elements, took)


def ambiguity_words(specs: Iterable[Spec], cases: Iterable[CaseResult]) -> tuple[AmbiguityWords, ...]:
    """The words of every ambiguity of ``specs`` that ``cases`` told
    readings apart on (`summarize`), sorted: what a run keeps of its specs
    so that its reports say the readings in words (`RunResult.ambiguities`)."""
    wanted = {(t.operator, t.ambiguity) for t in summarize(cases)}
    found = {(spec.operator, a.id): AmbiguityWords(spec.operator, a.id, a.question,
                                                   tuple((r.id, r.says) for r in a.readings))
             for spec in specs for a in spec.ambiguities if (spec.operator, a.id) in wanted}
    return tuple(found[key] for key in sorted(found))


def words_of(ambiguities: Iterable[AmbiguityWords]) -> dict[tuple[str, str], AmbiguityWords]:
    """``ambiguities`` by (operator, ambiguity id), for `in_words`."""
    return {(a.operator, a.ambiguity): a for a in ambiguities}


def in_words(taken: ReadingTaken, words: Mapping[tuple[str, str], AmbiguityWords], backend: str) -> tuple[str, str]:
    """``taken`` in two sentences: what the doc of its operator leaves open
    (the spec's question), then what ``backend`` did (the reading it took,
    as the spec says it; or which readings it mixed) and that it is accepted.
    Without the spec's words (a report of an older version), the ids."""
    said = words.get((taken.operator, taken.ambiguity))
    says = dict(said.readings) if said else {}
    question = said.question.strip() if said else f"{taken.ambiguity} (docs/ambiguities.md)"
    opened = f"{taken.operator}: its doc leaves a question open: {question}"

    def reading(r: str) -> str:
        return f'"{r}" ({says[r]})' if says.get(r) else f'"{r}"'

    n = taken.elements
    where = f"{n} element{'' if n == 1 else 's'} where the readings differ"
    explained = [(r, k) for r, k in taken.took if k]
    if taken.status == "not exercised":
        return opened, f"No case of {backend}'s run told the readings apart."
    if taken.status == "took none":
        return opened, f"{backend} took none of the readings on the {where}: those elements FAIL."
    if taken.mixed:
        parts = " and ".join(f"{reading(r)} on {k}" for r, k in explained)
        return opened, (f"{backend} mixed the readings: no one of them explains all {where}; it took {parts}. "
                        "Each result that matches a reading is accepted (PASS); worth knowing where a kernel "
                        "changes reading with the shape or the path.")
    whole = [r for r, k in taken.took if k == n]
    primary = taken.primary in whole
    chosen = [taken.primary] if primary else whole
    took = " or ".join(reading(r) for r in chosen)
    apart = "" if len(chosen) == 1 else " (its cases do not tell these apart)"
    kind = "the primary reading " if primary else "the reading " if len(chosen) == 1 else "the readings "
    return opened, (f"{backend} took {kind}{took}{apart} on all {where}. Accepted (PASS): the doc allows "
                    "it, like every reading an honest implementation could take.")


def summarize(cases: Iterable[CaseResult]) -> tuple[ReadingTaken, ...]:
    """Per operator and ambiguity (sorted), the readings its cases took."""
    primaries: dict[tuple[str, str], str] = {}
    elements: dict[tuple[str, str], int] = {}
    took: dict[tuple[str, str], dict[str, int]] = {}
    for case in cases:
        for name, count, explained in case.readings:
            body = name.removeprefix(PREFIX)
            marker = "=" in body and ":" not in body
            ambiguity, _, reading = body.partition("=" if marker else ":")
            key = (case.operator, ambiguity)
            if marker:
                primaries[key] = reading
                elements[key] = elements.get(key, 0) + count
            mine = took.setdefault(key, {})
            mine[reading] = mine.get(reading, 0) + explained
    out = []
    for key in sorted(took):
        primary = primaries.get(key, "")
        order = [primary, *sorted(r for r in took[key] if r != primary)]
        out.append(ReadingTaken(key[0], key[1], primary, elements.get(key, 0),
                                tuple((r, took[key].get(r, 0)) for r in order if r)))
    return tuple(out)
