// PhotoWire: under construction.
