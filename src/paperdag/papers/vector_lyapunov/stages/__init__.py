"""One module per kind of stage: thin adapters that read their inputs, call the science (platoon/, networks/) and
write their declared outputs; each defines the names of the files it produces."""
