"""Training: the loop, loss, optimiser and schedule, precision, torchrun/DDP, exact-resume
state and checkpoint averaging, validation and the run log."""
