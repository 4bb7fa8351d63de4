"""TEMPORARY: the entry point the installed package metadata names until it is reinstalled."""

from .tracking.evaluator import ExtractionEvaluator as ExtractionEvaluator
