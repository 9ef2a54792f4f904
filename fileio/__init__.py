"""Users' and services' files, without Prefect: tables (CSV, fixed width, workbooks) read under limits, the
input-row layer (column resolution, rejected rows), the address service's upload and result formats, the
newspaper documents, and the results written back (CSV, Excel, markdown)."""
