// PhotoStore: under construction.
