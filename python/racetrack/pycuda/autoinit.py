"""``import racetrack.pycuda.autoinit``: what ``import pycuda.autoinit`` sets up, on the
emulator: ``device`` (the one emulated device) and its ``context``."""

from . import driver as _driver

_driver.init()
device = _driver.Device(0)
context = device.make_context()
