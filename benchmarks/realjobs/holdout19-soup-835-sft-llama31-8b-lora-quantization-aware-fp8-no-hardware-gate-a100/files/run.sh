#!/bin/bash
# fp8-doctor holdout19 (eval20): RECONSTRUCTION. The launch line the MakazhanAlpamys/Soup README gives
# ("# soup.yaml — then just `soup train --config soup.yaml`"), on one A100 (issue 835's Ampere case).
soup train --config soup.yaml
