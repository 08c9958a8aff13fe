"""Triage: from a symptom, through its evidence in order, to the one shared cause.

The paths are data (:mod:`.paths`); :func:`.evaluate.triage` turns a snapshot
(and an optional baseline) into a verdict per path. Everything here is pure.
"""
