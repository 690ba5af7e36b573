"""Layer 2: ink file formats (W3C InkML, IAM-OnDB, the UNIPEN-derived JSON)."""
