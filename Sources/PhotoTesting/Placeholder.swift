// PhotoTesting: under construction.
