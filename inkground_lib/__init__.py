"""inkground: the reproducible companion to the inkGround paper.

Modules: ink (strokes), files (atomic writes), dataset (manifest, pages, words), formats (InkML, IAM-OnDB,
UNIPEN), synth (synthetic photographed pages), recorded (pages of real recorded words), render, metrics,
ocr, style, derender, pseudo (pseudo-label pipeline), prompt, parse, systems, cache, evaluate, paper,
book, runner, cli.
"""

__version__ = "0.1.0"
