"""Reading sources: raw text checks, YAML to positioned data, template discovery, the project file and schema checks."""
