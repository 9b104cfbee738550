"""The pipeline stages, one module per stage or small group of stages."""
