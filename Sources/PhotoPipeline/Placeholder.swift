// PhotoPipeline: under construction.
