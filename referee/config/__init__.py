"""Reading what a user wrote (league files, CLI bot arguments) into checked specs. May
import referee.core and referee.rules, never the trio shell."""
