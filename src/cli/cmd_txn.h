/*
 * cli/cmd_txn.h: the commands of cmd_txn.c, which each commit one transaction: add-files,
 * delete-files, set-properties, create-branch, create-tag, remove-ref, rollback.
 */
#ifndef ICM_CLI_CMD_TXN_H
#define ICM_CLI_CMD_TXN_H

#include "cli.h"

extern const icm_cli_command icm_cli_cmd_add_files;
extern const icm_cli_command icm_cli_cmd_delete_files;
extern const icm_cli_command icm_cli_cmd_set_properties;
extern const icm_cli_command icm_cli_cmd_create_branch;
extern const icm_cli_command icm_cli_cmd_create_tag;
extern const icm_cli_command icm_cli_cmd_remove_ref;
extern const icm_cli_command icm_cli_cmd_rollback;

#endif /* ICM_CLI_CMD_TXN_H */
