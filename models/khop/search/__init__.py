"""Local searches for k-hop trees: jump moves, window LNS, windowed label search (and the constructor)."""
