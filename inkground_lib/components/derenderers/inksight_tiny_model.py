"""A tiny SavedModel with InkSight's serving signature, and a JPEG parity check: the TensorFlow side of
``make inksight-e2e``. Run in InkSight's environment (it imports tensorflow inside the functions, so the main
environment can import the constants)::

    $INKSIGHT_PYTHON -m inkground_lib.components.derenderers.inksight_tiny_model export DIR
    $INKSIGHT_PYTHON -m inkground_lib.components.derenderers.inksight_tiny_model jpeg-parity CANVAS.npy FILE.jpg

The signature is the one the public notebook calls (google-research/inksight colab.ipynb, checked
2026-11-30, lines 1087-1091): ``serving_default`` with inputs ``input_text`` (string, shape (batch,)) and
``image/encoded`` (string, shape (batch, 1), JPEG bytes), output ``output_0`` (string, shape (batch, 1)).

The tiny model decodes the JPEG (a malformed one fails the call, as it would in InkSight) and answers
:data:`TINY_FALLBACK_ANSWER` (a fixed, valid ink-token answer) to "Derender the ink.", and to any other
prompt the ink-free text "tiny <n> bytes" (n = the JPEG's length), so that one word exercises the
notebook's fallback retry and shows the image bytes arrived whole.
"""

from __future__ import annotations

import json
import sys

TINY_FALLBACK_ANSWER = ("<ink_token_450><ink_token_20><ink_token_325><ink_token_60><ink_token_305>"
                        "<ink_token_100><ink_token_345>"
                        "<ink_token_450><ink_token_5><ink_token_6>"        # a pair with y < 0: dropped
                        "<ink_token_120><ink_token_315><ink_token_200><ink_token_335>")
"""Strokes (224-canvas pixels) [(20, 100), (60, 80), (100, 120)] and [(120, 90), (200, 110)]; the pair
(5, 6 - 225) is dropped by position, as the notebook's ``detokenize`` drops it."""


TINY_FALLBACK_STROKES = [[(20.0, 100.0), (60.0, 80.0), (100.0, 120.0)], [(120.0, 90.0), (200.0, 110.0)]]


def export_tiny_model(out_dir: str) -> str:
    """Write the tiny SavedModel to ``out_dir`` (a new or empty folder); returns ``out_dir``."""
    import logging

    import tensorflow as tf

    logging.getLogger("absl").setLevel(logging.ERROR)  # "image/encoded is not a valid parameter name"

    class Tiny(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="input_text"),
                                      tf.TensorSpec([None, 1], tf.string, name="image/encoded")])
        def serve(self, input_text, image):
            def one(args):
                prompt, jpeg = args
                img = tf.io.decode_jpeg(jpeg[0], channels=3)
                with tf.control_dependencies([tf.debugging.assert_equal(tf.shape(img), [224, 224, 3])]):
                    n = tf.strings.as_string(tf.strings.length(jpeg[0]))
                return tf.where(tf.equal(prompt, "Derender the ink."), tf.constant(TINY_FALLBACK_ANSWER),
                                tf.strings.join(["tiny ", n, " bytes"]))

            out = tf.map_fn(one, (input_text, image), fn_output_signature=tf.string)
            return {"output_0": tf.reshape(out, [-1, 1])}

    m = Tiny()
    tf.saved_model.save(m, out_dir, signatures={"serving_default": m.serve})
    return out_dir


def jpeg_parity(canvas_npy: str, jpeg_file: str) -> dict:
    """Compare ``tf.io.encode_jpeg`` of the canvas (as the notebook calls it) with the bytes in
    ``jpeg_file`` (written by :func:`inkground_lib.components.derenderers.inksight.inksight_jpeg`)."""
    import numpy as np
    import tensorflow as tf

    canvas = np.load(canvas_npy)
    tf_bytes = tf.io.encode_jpeg(canvas[:, :, :3]).numpy()
    with open(jpeg_file, "rb") as f:
        ours = f.read()
    same_pixels = bool(np.array_equal(tf.io.decode_jpeg(tf_bytes).numpy(), tf.io.decode_jpeg(ours).numpy()))
    return {"equal": tf_bytes == ours, "same_pixels": same_pixels, "tf_bytes": len(tf_bytes),
            "our_bytes": len(ours), "tensorflow": tf.__version__}


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 2 and args[0] == "export":
        print(json.dumps({"exported": export_tiny_model(args[1])}))
        return 0
    if len(args) == 3 and args[0] == "jpeg-parity":
        print(json.dumps(jpeg_parity(args[1], args[2])))
        return 0
    print("usage: inksight_tiny_model export DIR | jpeg-parity CANVAS.npy FILE.jpg", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
