from . import loss
