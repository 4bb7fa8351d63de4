"""Helpers the test modules share (never tests themselves): servers, reading runs back, the
registry world, input writers and strategies, and the plain reference implementations the
scorers are checked against. Test modules import from here, never from each other."""
