from memrepo.cli import main

raise SystemExit(main())
