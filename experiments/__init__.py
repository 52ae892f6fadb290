"""Reproducible studies built on the library; each module runs as ``python -m experiments.NAME``.

=========================================  =======================================================
Module                                     Study
=========================================  =======================================================
:mod:`experiments.feature_importance`      feature importance by state-space abstraction on
                                           Goofspiel(5) (Fujii; ``trainers.md`` section 7)
=========================================  =======================================================
"""
