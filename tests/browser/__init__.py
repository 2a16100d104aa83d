"""Browser tests of the built book."""
