"""The settings of a section-03 scoring run (:class:`EvalSettings`), recorded in each run's facts file."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from inkground_lib.core.defaults import GRID, N_BOOT, SPACING
from inkground_lib.core.run_files import REFERENCES


@dataclass(frozen=True)
class EvalSettings:
    """Definitions a scoring run depends on (each is a parameter of section 03 and varied in section 04).

    spacing: arc-length resampling step in word heights (None: no resampling); reference: "reference"
    (the dataset's reference inks: pseudo-labels on a benchmark set) or "true" (true / recorded
    trajectories, where the dataset has them); ocr_engine: OCR for AR / CR (inkground_lib.components.ocr); casefold:
    compare texts case-insensitively; style_words: "test" (Style over the classifier's held-out words, the
    default) or "all"; grid: the prompt's grid size; variant default of the prompt; n_boot, seed, ci: the
    page bootstrap; style: StyleParams fields as a dict (empty: defaults)."""

    spacing: float | None = SPACING
    reference: str = "reference"
    ocr_engine: str = "rapidocr"
    casefold: bool = True
    style_words: str = "test"
    grid: int = GRID
    n_boot: int = N_BOOT
    seed: int = 0
    ci: float = 0.95
    style: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.reference not in REFERENCES:
            raise ValueError(f"EvalSettings.reference must be 'reference' or 'true', got {self.reference!r}")
        if self.style_words not in ("test", "all"):
            raise ValueError(f"EvalSettings.style_words must be 'test' or 'all', got {self.style_words!r}")


def settings_dict(settings: EvalSettings) -> dict:
    """The settings as a plain dict (the ``settings`` field of a run's facts file)."""
    return asdict(settings)
