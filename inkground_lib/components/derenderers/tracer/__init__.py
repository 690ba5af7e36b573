"""The tracer: inkground's own learned derenderer (issue 29).

A hybrid: the skeleton derenderer (:mod:`..skeleton`) gives the strokes' geometry; a small transformer
(:mod:`.model`) that sees the skeleton's strokes and the word's text decides the writer's order of those
strokes and the direction of each. Modules: :mod:`.eval_writers` (the writers no model may train on),
:mod:`.features` (model inputs), :mod:`.samples` (training samples from recorded words), :mod:`.model`,
:mod:`.train`, :mod:`.weights` (save, load with a sha256 check), :mod:`.derenderer` (TracerDerenderer).
Checking it as section 02 would: :func:`inkground_lib.pseudo.tracer_eval.evaluate_tracer` (it needs the
pseudo layer, so it lives there). The model card is ``data/models/MODEL.md``.
"""
