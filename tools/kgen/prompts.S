/* prompts.S: the default prompt templates (tools/kgen/prompts/), built
 * into kgen so it works alone; prompt.c reads files first when it finds
 * them. Each is NUL-terminated. */
	.section .rodata
	.global kgen_prompt_system
	.type kgen_prompt_system, @object
kgen_prompt_system:
	.incbin "tools/kgen/prompts/system.txt"
	.byte 0
	.size kgen_prompt_system, . - kgen_prompt_system

	.global kgen_prompt_user
	.type kgen_prompt_user, @object
kgen_prompt_user:
	.incbin "tools/kgen/prompts/user.txt"
	.byte 0
	.size kgen_prompt_user, . - kgen_prompt_user

	.section .note.GNU-stack, "", @progbits
