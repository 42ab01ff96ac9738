"""The protocol lattice: every mixture of the presets' conventions scored at once, gaps decomposed into them."""
