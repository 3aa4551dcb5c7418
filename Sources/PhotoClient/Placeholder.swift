// PhotoClient: under construction.
