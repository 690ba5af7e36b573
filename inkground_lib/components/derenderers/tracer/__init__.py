"""The tracer: inkground's own learned derenderer (issue 29).

A hybrid: the skeleton derenderer (:mod:`..skeleton`), run at the tracer's own resolution
(:data:`.derenderer.TRACER_GEOMETRY`, 160 work pixels: finer geometry than the skeleton derenderer's 80), gives
the strokes' geometry; a small transformer (:mod:`.model`) that sees those strokes and a text decides the
writer's order of the strokes and the direction of each. Which text is its *text mode*
(:data:`.derenderer.TEXT_MODES`): "recognize" (recognize and derender, section 02's default: the OCR reading of
the crop), "text" (derender with text: the word's true text; section 03's specialist) or "none". Modules: :mod:`.eval_writers` (the writers no model may train on),
:mod:`.features` (model inputs), :mod:`.samples` (training samples from recorded words), :mod:`.model`,
:mod:`.train`, :mod:`.weights` (save, load with a sha256 check), :mod:`.derenderer` (TracerDerenderer).
Checking it as section 02 would: :func:`inkground_lib.pseudo.tracer_eval.evaluate_tracer` (it needs the
pseudo layer, so it lives there). The model card is ``data/models/MODEL.md``.
"""
