"""Layer 4: the components sections 02 and 03 share: metrics, derenderers, OCR and the Style classifier."""
