"""The games of hiddenenvs, one module each (see hiddenenvs.registry for names)."""
