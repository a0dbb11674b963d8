"""Machines composing the actors, one per spec family."""
