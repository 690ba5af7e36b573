"""Layer 5, section 02: pseudo-labels (derender -> OCR filter -> raters -> benchmark set)."""
