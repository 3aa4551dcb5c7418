"""Loads another script of this directory as a module: their names have hyphens, which
`import` does not take (`siblings.load("index-bench.py")` is index-bench's module)."""
import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def load(file):
    spec = importlib.util.spec_from_file_location(file[:-3].replace("-", "_"), os.path.join(HERE, file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
