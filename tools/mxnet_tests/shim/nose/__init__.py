"""A stand-in for the few ``nose`` names MXNet's test files import (nose does not run on this Python)."""
