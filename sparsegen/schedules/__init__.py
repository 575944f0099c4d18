"""Schedules: how a template runs on a target family, with each schedule's knob space as data."""
