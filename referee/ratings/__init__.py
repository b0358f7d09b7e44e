"""Pure statistics: Elo fits with bootstrap intervals and the SPRT. Imports only the
standard library and attrs."""
