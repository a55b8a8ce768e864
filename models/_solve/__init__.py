"""Solver plumbing with no problem knowledge: one linear model, its results, Lagrangian bounds."""
