#!/usr/bin/env python3
"""cdplan's predictions for cases.json, written before the cases run (truth discipline):

  python3 data/measurements/h200-transformer-llama/predict.py build/cli/cdplan > predictions_prerun.json

The same as ../h200-transformer/predict.py's, with the shipped calibration.
"""
import importlib.util
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "tf_predict", os.path.join(here, os.pardir, "h200-transformer", "predict.py"))
tf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tf)
tf.predict(sys.argv[1], os.path.join(here, "cases.json"),
           "cdplan step with the shipped H200 calibration, commit after c63792b")
